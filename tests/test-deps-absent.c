/* SPDX-License-Identifier: MIT */
/*
 * Without libbpf.so.1 the bpf monitor, and without libibverbs.so.1 a
 * verbs cache, fail with -EOPNOTSUPP and a message naming the library and
 * the package to install; every other cache still works.  The libraries
 * are hidden in a private mount namespace of a child (an empty file bound
 * over each), so this needs root.  Control: in a child without the mounts
 * the same creates succeed (bpf where it starts here).
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

static char messages[8192];

static void collect(void *arg, int level, const char *msg)
{
	size_t n = strlen(messages);

	snprintf(messages + n, sizeof(messages) - n, "%s\n", msg);
}

/* Where the dynamic loader finds soname (ldconfig's cache), resolved. */
static int lib_path(const char *soname, char *out)
{
	char line[1024], *name, *arrow;
	FILE *p = popen("/sbin/ldconfig -p 2>/dev/null", "r");
	int found = 0;

	while (p && !found && fgets(line, sizeof(line), p)) {
		name = line + strspn(line, " \t");
		arrow = strstr(line, "=> ");
		if (arrow && !strncmp(name, soname, strlen(soname)) && name[strlen(soname)] == ' ') {
			arrow[3 + strcspn(arrow + 3, "\n")] = 0;
			found = realpath(arrow + 3, out) != NULL;
		}
	}
	if (p)
		pclose(p);
	return found ? 0 : -ENOENT;
}

static int hide(const char *path)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("/dev/null", path, NULL, MS_BIND, NULL))
		return -errno;
	return 0;
}

static int create_destroy(enum mrcache_backend_kind backend, enum mrcache_monitor_kind kind)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	int rc;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, kind);
	if (backend == MRCACHE_BACKEND_VERBS) {
		cfg.backend = backend;
		/* Never dereferenced: open() loads the library first. */
		cfg.pd = (struct ibv_pd *)&tb;
	}
	rc = mrcache_create(&cfg, &c);
	if (rc == 0)
		mrcache_destroy(c);
	return rc;
}

/* In a child: hide path (if given), create, report the code (0 or the
 * errno) as the exit status, the messages on stdout. */
static int try_create(const char *path, enum mrcache_backend_kind backend,
		      enum mrcache_monitor_kind kind, char *out, size_t len)
{
	int fd[2], status, rc;
	ssize_t n;
	pid_t pid;

	if (pipe(fd))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		unsetenv("MRCACHE_MONITOR");
		mrcache_set_log(collect, NULL, MRCACHE_LOG_ERROR);
		rc = path ? hide(path) : 0;
		if (rc) {
			snprintf(messages, sizeof(messages), "hiding %s: %s\n", path, strerror(-rc));
			rc = 200;
		} else {
			rc = -create_destroy(backend, kind);
		}
		n = write(fd[1], messages, strlen(messages));
		_exit(n < 0 ? 201 : rc);
	}
	close(fd[1]);
	n = read(fd[0], out, len - 1);
	out[n > 0 ? n : 0] = 0;
	close(fd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void check_absent(const char *soname, const char *package,
			 enum mrcache_backend_kind backend, enum mrcache_monitor_kind kind)
{
	char path[PATH_MAX], out[8192];
	int rc;

	if (lib_path(soname, path)) {
		printf("%s is not installed: nothing to hide\n", soname);
		return;
	}
	rc = try_create(NULL, backend, kind, out, sizeof(out));
	if (rc) {
		printf("%s: not testable here (create fails with it installed: %s)%s\n",
		       soname, strerror(rc), out);
		return;
	}
	printf("control: with %s, create succeeds\n", soname);
	rc = try_create(path, backend, kind, out, sizeof(out));
	if (rc == 200)
		SKIP("cannot hide %s: %s", soname, out);
	printf("without %s: %s\n%s", soname, strerror(rc), out);
	CHECK_EQ(rc, EOPNOTSUPP);
	CHECK(strstr(out, soname) != NULL);
	CHECK(strstr(out, package) != NULL);
	/* The rest of the library does not need it. */
	CHECK_EQ(try_create(path, MRCACHE_BACKEND_CALLBACKS, MRCACHE_MONITOR_NONE,
			    out, sizeof(out)), 0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid())
		SKIP("hiding a library needs root (a mount namespace)");
#ifdef MRC_HAVE_BPF
	check_absent("libbpf.so.1", "libbpf1", MRCACHE_BACKEND_CALLBACKS, MRCACHE_MONITOR_BPF);
#endif
#ifdef MRC_HAVE_VERBS
	check_absent("libibverbs.so.1", "libibverbs1", MRCACHE_BACKEND_VERBS, MRCACHE_MONITOR_NONE);
#endif
	return test_result();
}
