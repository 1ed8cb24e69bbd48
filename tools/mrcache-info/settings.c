/* SPDX-License-Identifier: MIT */
/*
 * settings.c - the configuration a program gets here after the MRCACHE_*
 * variables, and the variables themselves, as the library describes them
 * (mrcache_env_describe): this file names none of them itself.
 */
#include <stdlib.h>
#include <string.h>
#include "info.h"

extern char **environ;

static void print_limit(FILE *out, const char *name, size_t v)
{
	if (v)
		fprintf(out, "  %-13s %zu\n", name, v);
	else
		fprintf(out, "  %-13s unlimited\n", name);
}

static int create_from_env(void *arg)
{
	struct mrcache_config cfg;

	mrcache_config_init(&cfg);
	return info_try_cache(&cfg, arg);
}

int info_config(FILE *out)
{
	struct mrcache_config in_effect;
	char said[2048];
	int rc = info_capture(create_from_env, &in_effect, MRCACHE_LOG_ERROR, said,
			      sizeof(said));

	fprintf(out, "Configuration in effect (mrcache_config_init's defaults, then the "
		"environment):\n");
	if (rc) {
		fprintf(out, "  mrcache_create fails here: %s (%s)\n", said[0] ? said : "no message",
			strerrorname_np(-rc) ? strerrorname_np(-rc) : strerror(-rc));
		return 1;
	}
	fprintf(out, "  %-13s %s\n", "monitor", mrcache_monitor_name(in_effect.monitor));
	print_limit(out, "max_regions", in_effect.max_regions);
	print_limit(out, "max_bytes", in_effect.max_bytes);
	fprintf(out, "  %-13s %s\n", "merge",
		in_effect.flags & MRCACHE_FLAG_NO_MERGE ? "no" : "yes");
	fprintf(out, "  %-13s %s\n", "caching",
		in_effect.flags & MRCACHE_FLAG_DISABLE ?
		"off: pass-through, every get registers, every last put deregisters" : "on");
	if (said[0])
		fprintf(out, "  the library said: %s\n", said);
	return 0;
}

static int described(const char *var, size_t len)
{
	const char *name;

	for (unsigned i = 0; mrcache_env_describe(i, &name, NULL, NULL) == 0; i++)
		if (strlen(name) == len && !strncmp(var, name, len))
			return 1;
	return 0;
}

void info_environment(FILE *out)
{
	static const char prefix[] = "MRCACHE_";
	const char *name, *def, *help, *now;
	int unknown = 0;

	fprintf(out, "Environment (read by mrcache_create unless MRCACHE_FLAG_NO_ENV):\n");
	for (unsigned i = 0; mrcache_env_describe(i, &name, &def, &help) == 0; i++) {
		now = getenv(name);
		fprintf(out, "  %-20s default %-10s now %s%s%s\n      %s\n", name,
			def[0] ? def : "(unset)", now ? "\"" : "", now ? now : "(unset)",
			now ? "\"" : "", help);
	}
	for (char **e = environ; e && *e; e++) {
		size_t len = strcspn(*e, "=");

		if (strncmp(*e, prefix, strlen(prefix)) || described(*e, len))
			continue;
		if (!unknown++)
			fprintf(out, "  set but unknown to the library (a typo?):\n");
		fprintf(out, "    %.*s\n", (int)len, *e);
	}
}
