/* SPDX-License-Identifier: MIT */
/*
 * mrc-audit - run a program with libmrc-audit.so preloaded: every memory
 * registration it makes through libibverbs is watched by the kernel
 * monitor, and every local use of one (the SGEs of its posts) is checked;
 * a use of a registration whose memory was unmapped or replaced since is
 * reported as stale (docs/audit.md, mrc-audit(1)).
 *
 * The front end only sets the environment (LD_PRELOAD and MRC_AUDIT_*)
 * and execs the program; the library does the rest, so LD_PRELOAD by hand
 * (mpirun -x LD_PRELOAD=...) does the same.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MRA_LIB "libmrc-audit.so"
#ifndef MRC_AUDIT_LIBDIR
#define MRC_AUDIT_LIBDIR "/usr/local/lib"
#endif

static void usage(FILE *f)
{
	fputs("usage: mrc-audit [--json] [--output PATH] [--fatal] [--signal SIG]\n"
	      "                 [--library PATH] -- PROGRAM [ARGS...]\n"
	      "       mrc-audit --print-library\n"
	      "The program's exit status, or 2 on a bad option, 127 when it cannot be run.\n", f);
}

static void help(void)
{
	printf("mrc-audit - find stale memory registrations in an unmodified RDMA program\n\n"
	       "Runs PROGRAM with " MRA_LIB " preloaded.  Every registration made through\n"
	       "libibverbs (ibv_reg_mr, ibv_reg_mr_iova[2], ibv_rereg_mr) is recorded with\n"
	       "its call stack and watched by the kernel monitor (/dev/mrmon); every SGE of\n"
	       "ibv_post_send, ibv_post_recv, ibv_post_srq_recv and ibv_wr_set_sge* is\n"
	       "checked against it.  A use is stale when the memory it names was\n"
	       "unmapped, remapped or discarded after the registration and not registered\n"
	       "again since.  The report (at exit, and on a signal) gives the stale uses\n"
	       "with the registration's stack and the invalidation's cause, the\n"
	       "registrations invalidated while their rkey stayed valid (at risk), and\n"
	       "the time spent registering and deregistering.  Without /dev/mrmon the\n"
	       "report says there was no witness.\n\n"
	       "  -j, --json           the report as one JSON object per process\n"
	       "  -o, --output PATH    append the report to PATH (%%p: the pid), not stderr\n"
	       "  -f, --fatal          raise SIGTRAP at the first stale use\n"
	       "  -s, --signal SIG     also report when SIG arrives: USR1, USR2 (default),\n"
	       "                       a number, or none\n"
	       "  -l, --library PATH   the interposition library to preload\n"
	       "  -p, --print-library  print the library's path and exit (for LD_PRELOAD by\n"
	       "                       hand, e.g. mpirun -x LD_PRELOAD=$(mrc-audit -p) ...)\n"
	       "  -h, --help           this text\n\n");
	usage(stdout);
}

static int usable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* MRC_AUDIT_LIB, then beside this program (the build tree: build/tools/..
 * holds it; an install: ../lib), then the libdir it was built for. */
static int find_library(char *out, size_t size)
{
	const char *env = getenv("MRC_AUDIT_LIB");
	char self[PATH_MAX], *dir;
	ssize_t n;

	if (env && *env) {
		snprintf(out, size, "%s", env);
		return usable(out) ? 0 : -1;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		dir = dirname(self);
		snprintf(out, size, "%s/../" MRA_LIB, dir);
		if (usable(out))
			return 0;
		snprintf(out, size, "%s/../lib/" MRA_LIB, dir);
		if (usable(out))
			return 0;
	}
	snprintf(out, size, "%s/" MRA_LIB, MRC_AUDIT_LIBDIR);
	return usable(out) ? 0 : -1;
}

static int bad_signal(const char *s)
{
	char *end;
	long n;

	if (!strncmp(s, "SIG", 3))
		s += 3;
	if (!strcmp(s, "USR1") || !strcmp(s, "USR2") || !strcmp(s, "none"))
		return 0;
	n = strtol(s, &end, 10);
	return !*s || *end || n < 0 || n > 64;
}

static int set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;
	int rc;

	if (old && *old) {
		if (asprintf(&v, "%s:%s", lib, old) < 0)
			return -1;
	} else if (!(v = strdup(lib))) {
		return -1;
	}
	rc = setenv("LD_PRELOAD", v, 1);
	free(v);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "fatal", no_argument, NULL, 'f' },
		{ "signal", required_argument, NULL, 's' },
		{ "library", required_argument, NULL, 'l' },
		{ "print-library", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char lib[PATH_MAX], real[PATH_MAX];
	const char *libopt = NULL;
	int c, print = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jo:fs:l:ph", opts, NULL)) != -1) {
		switch (c) {
		case 'j': setenv("MRC_AUDIT_JSON", "1", 1); break;
		case 'f': setenv("MRC_AUDIT_FATAL", "1", 1); break;
		case 'o':
			if (!*optarg) {
				fprintf(stderr, "mrc-audit: --output needs a path\n");
				return 2;
			}
			setenv("MRC_AUDIT_OUTPUT", optarg, 1);
			break;
		case 's':
			if (bad_signal(optarg)) {
				fprintf(stderr, "mrc-audit: --signal '%s': not USR1, USR2, a signal number or none\n", optarg);
				return 2;
			}
			setenv("MRC_AUDIT_SIGNAL", optarg, 1);
			break;
		case 'l': libopt = optarg; break;
		case 'p': print = 1; break;
		case 'h': help(); return 0;
		default:
			if (optopt)
				fprintf(stderr, "mrc-audit: option -%c: %s\n", optopt,
					strchr("osl", optopt) ? "needs an argument" : "unknown");
			else
				fprintf(stderr, "mrc-audit: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (libopt) {
		snprintf(lib, sizeof(lib), "%s", libopt);
		if (!usable(lib)) {
			fprintf(stderr, "mrc-audit: --library %s: %s\n", lib, strerror(errno));
			return 2;
		}
	} else if (find_library(lib, sizeof(lib))) {
		fprintf(stderr, "mrc-audit: cannot find " MRA_LIB " (looked beside this program and in "
			MRC_AUDIT_LIBDIR "; MRC_AUDIT_LIB or --library name it)\n");
		return 127;
	}
	/* ld.so takes LD_PRELOAD names relative to nothing: give it a full path. */
	if (realpath(lib, real))
		snprintf(lib, sizeof(lib), "%s", real);
	if (print) {
		printf("%s\n", lib);
		return 0;
	}
	if (optind >= argc) {
		fprintf(stderr, "mrc-audit: no program given\n");
		usage(stderr);
		return 2;
	}
	if (set_preload(lib)) {
		fprintf(stderr, "mrc-audit: cannot set LD_PRELOAD: %s\n", strerror(errno));
		return 127;
	}
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "mrc-audit: %s: %s\n", argv[optind], strerror(errno));
	return 127;
}
