/* SPDX-License-Identifier: MIT */
/*
 * mrcache-info - what mrcache can do on this machine, as ibv_devinfo,
 * ucx_info and fi_info do for theirs: the monitors that start here and why
 * the others cannot, what `auto` takes and why, the configuration in
 * effect after the environment, every MRCACHE_* variable, and the mrmon
 * module's ABI.
 */
#include <stdio.h>
#include <string.h>
#include "info.h"

static void usage(FILE *f)
{
	fputs("usage: mrcache-info [--help]\n"
	      "Exit 0, or 1 when the configuration in effect cannot create a cache here\n"
	      "(a program would fail the same way), 2 on a bad option.\n", f);
}

static void help(void)
{
	printf("mrcache-info - which mrcache monitors work here, and the settings in effect\n\n"
	       "Starts each monitor on a throw-away cache that pins nothing, as a\n"
	       "program's mrcache_create() would, and prints whether it started and, if\n"
	       "not, the library's reason, and which one auto would take and why; then\n"
	       "the configuration a program gets after the MRCACHE_* variables, every\n"
	       "variable with its default and value (and those set that the library\n"
	       "does not read), and the mrmon module's ABI version, features and\n"
	       "limits when /dev/mrmon exists.  Run it as the\n"
	       "user, and with the environment, of the program in question.\n\n");
	usage(stdout);
}

int main(int argc, char **argv)
{
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			help();
			return 0;
		}
		fprintf(stderr, "mrcache-info: unknown %s '%s'\n",
			argv[i][0] == '-' ? "option" : "argument", argv[i]);
		usage(stderr);
		return 2;
	}
	printf("libmrcache %s (built against header %s)\n\n", mrcache_version(), MRCACHE_VERSION);
	info_monitors(stdout);
	printf("\n");
	rc = info_config(stdout);
	printf("\n");
	info_environment(stdout);
	printf("\n");
	info_module(stdout);
	return rc;
}
