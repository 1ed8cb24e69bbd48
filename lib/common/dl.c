/* SPDX-License-Identifier: MIT */
/*
 * dl.c - load an optional dependency by its versioned soname and resolve
 * its functions (lib/common/dl.h says why).
 *
 * A library is loaded once and never unloaded: the tables point into it
 * for the rest of the process, and unloading a namespace that holds a
 * libc of its own is not something glibc does reliably.  A failure is
 * remembered too (a failed dlmopen must not use up a namespace per
 * cache) with its reason, which every later call logs again.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "common/dl.h"

#define MAX_LIBS 4

struct loaded {
	const struct mrc_dl_lib *lib;
	int rc;
	char why[256];
	/* The namespace's own libc sets up its locale tables (isalpha(),
	 * isspace()...) in its thread-local storage only for the thread that
	 * loaded it: any other thread that calls into the library must run
	 * this first, or the library's first ctype call crashes there. */
	void (*ctype_init)(void);
};

/* lock guards loaded[]; held while a library loads, so that two caches
 * created at once load it once. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct loaded loaded[MAX_LIBS];

static void *open_lib(struct loaded *l)
{
	const struct mrc_dl_lib *lib = l->lib;
	void *h;

	if (lib->isolate) {
		h = dlmopen(LM_ID_NEWLM, lib->soname, RTLD_NOW | RTLD_LOCAL);
		if (h) {
			*(void **)&l->ctype_init = dlsym(h, "__ctype_init");
			return h;
		}
		/* A static program has no namespaces, but its dlopen loads a
		 * libc of its own anyway; a dynamic one out of namespaces
		 * shares the application's. */
		mrc_log(1, "%s: dlmopen of %s: %s; loading it with dlopen", lib->what,
			lib->soname, dlerror());
	}
	return dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
}

static int load(struct loaded *l)
{
	const struct mrc_dl_lib *lib = l->lib;
	void *h = open_lib(l);

	if (!h) {
		snprintf(l->why, sizeof(l->why), "cannot load %s (install %s): %s",
			 lib->soname, lib->package, dlerror());
		return -EOPNOTSUPP;
	}
	for (const struct mrc_dl_sym *s = lib->syms; s->name; s++) {
		*s->addr = s->version ? dlvsym(h, s->name, s->version) : dlsym(h, s->name);
		if (!*s->addr) {
			snprintf(l->why, sizeof(l->why), "%s has no %s%s%s (too old?)",
				 lib->soname, s->name, s->version ? "@" : "",
				 s->version ? s->version : "");
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

int mrc_dl_load(const struct mrc_dl_lib *lib)
{
	struct loaded *l = NULL;
	int i, rc;

	pthread_mutex_lock(&lock);
	for (i = 0; i < MAX_LIBS && !l; i++) {
		if (!loaded[i].lib) {
			loaded[i].lib = lib;
			loaded[i].rc = load(&loaded[i]);
		}
		if (loaded[i].lib == lib)
			l = &loaded[i];
	}
	rc = l ? l->rc : -EOPNOTSUPP;
	if (!rc && l->ctype_init)
		l->ctype_init();
	if (rc)
		mrc_log(0, "%s: %s", lib->what, l ? l->why : "too many optional libraries");
	pthread_mutex_unlock(&lock);
	return rc;
}
