/* SPDX-License-Identifier: MIT */
/*
 * mrc-prof - where the time goes in programs that generate VM activity.
 *
 *   mrc-prof [options] -- CMD ARGS     trace CMD (threads and children)
 *   mrc-prof replay [options] TRACE    analyse a recorded trace again
 *
 * See docs/mrc-prof.md and mrc-prof(1).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "analysis.h"
#include "callsite.h"
#include "libprof.h"
#include "plots.h"
#include "report.h"
#include "symbols.h"
#include "tracer.h"

#define MAX_CONFIGS 16

struct options {
	const char *json, *text, *record, *svg, *counts;
	struct mp_sim_config conf[MAX_CONFIGS];
	size_t nconf;
	int top, quiet, calibrate;
	int library_io;			/* count the libraries' I/O as the program's */
	struct mp_tracer_opts tracer;
};

static void usage(FILE *f)
{
	fputs("usage: mrc-prof [options] -- CMD [ARGS...]\n"
	      "       mrc-prof replay [options] TRACE\n"
	      "  -o, --json FILE        JSON report\n"
	      "  -t, --text FILE        text report (default: stderr)\n"
	      "  -q, --quiet            no text report on stderr\n"
	      "  -s, --svg PREFIX       PREFIX-{timeline,latency,costs,libmrcache}.svg\n"
	      "  -c, --config SPEC      simulated cache NAME:key=value,... (repeatable;\n"
	      "                         keys: engine=sim|libmrcache backend=verbs|uring\n"
	      "                         monitor=kernel|bpf|uffd|hooks|none\n"
	      "                         max_regions max_bytes reg_us reg_ns_per_byte dereg_us\n"
	      "                         dereg_ns_per_byte lookup_ns watch_ns unwatch_ns vmcall_ns inval_ns)\n"
	      "      --counts FILE      '<syscall> <calls>' lines (compare with strace -c)\n"
	      "      --top N            call sites shown (default 15)\n"
	      "      --library-io       count the I/O of ld.so, libbpf and libmrcache as the\n"
	      "                         program's (default: reported apart, not cached)\n"
	      "tracing only:\n"
	      "  -r, --record FILE      save the trace for replay\n"
	      "  -b, --buffer-min N     trace I/O buffers of at least N bytes (default 16K; 0: off)\n"
	      "  -d, --depth N          call-site frames, 1-8 (default 4: the syscall, its\n"
	      "                         caller, then frames outside libc, ld.so, libmrcache)\n"
	      "  -u, --unwind MODE      callers by 'scan' of the stack (default, fast) or\n"
	      "                         'dwarf' CFI unwinding (exact, slower)\n"
	      "      --no-aslr          disable address randomisation (reproducible counts)\n"
	      "      --only-first       record the first process only (children still run traced)\n"
	      "      --no-calibrate     do not subtract the tracing overhead from latencies\n",
	      f);
}

static void help(void)
{
	fputs("mrc-prof - where the time goes in programs that generate VM activity\n\n"
	      "Runs an unmodified program, with its threads and children, and reports its\n"
	      "VM activity (mmap, munmap, mremap, madvise, brk, shmat/shmdt) per syscall\n"
	      "and per call site, what a registration cache over its large I/O buffers\n"
	      "would hit, miss and cost, and, when it uses libmrcache, where the library's\n"
	      "time goes.  `replay' analyses a recorded trace under other cache\n"
	      "configurations.  See mrc-prof(1).\n\n",
	      stdout);
	usage(stdout);
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

enum { OPT_COUNTS = 256, OPT_TOP, OPT_NO_ASLR, OPT_ONLY_FIRST, OPT_NO_CALIBRATE,
       OPT_LIBRARY_IO };

static int parse_args(int argc, char **argv, int replay, struct options *o)
{
	static const struct option longopts[] = {
		{ "json", required_argument, NULL, 'o' },
		{ "text", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "svg", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "record", required_argument, NULL, 'r' },
		{ "buffer-min", required_argument, NULL, 'b' },
		{ "depth", required_argument, NULL, 'd' },
		{ "unwind", required_argument, NULL, 'u' },
		{ "counts", required_argument, NULL, OPT_COUNTS },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "no-aslr", no_argument, NULL, OPT_NO_ASLR },
		{ "only-first", no_argument, NULL, OPT_ONLY_FIRST },
		{ "no-calibrate", no_argument, NULL, OPT_NO_CALIBRATE },
		{ "library-io", no_argument, NULL, OPT_LIBRARY_IO },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	unsigned long long v;
	int c;

	o->top = 15;
	o->calibrate = 1;
	o->tracer.buffer_min = 16384;
	o->tracer.depth = 4;
	while ((c = getopt_long(argc, argv, "+o:t:qs:c:r:b:d:u:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->json = optarg; break;
		case 't': o->text = optarg; break;
		case 'q': o->quiet = 1; break;
		case 's': o->svg = optarg; break;
		case OPT_COUNTS: o->counts = optarg; break;
		case OPT_LIBRARY_IO: o->library_io = 1; break;
		case 'c':
			if (o->nconf == MAX_CONFIGS) {
				fprintf(stderr, "mrc-prof: at most %d --config\n", MAX_CONFIGS);
				return -EINVAL;
			}
			if (mp_sim_config_parse(optarg, &o->conf[o->nconf]))
				return -EINVAL;
			o->nconf++;
			break;
		case OPT_TOP:
			if (parse_uint(optarg, 100000, &v))
				goto bad;
			o->top = (int)v;
			break;
		case 'r': case 'b': case 'd': case 'u': case OPT_NO_ASLR: case OPT_ONLY_FIRST:
		case OPT_NO_CALIBRATE:
			if (replay) {
				fprintf(stderr, "mrc-prof: replay: -%c is a tracing option\n",
					c < 256 ? c : '-');
				return -EINVAL;
			}
			if (c == 'r')
				o->record = optarg;
			else if (c == 'b' && !parse_uint(optarg, UINT32_MAX, &v))
				o->tracer.buffer_min = (uint32_t)v;
			else if (c == 'd' && !parse_uint(optarg, MP_MAX_FRAMES, &v) && v)
				o->tracer.depth = (int)v;
			else if (c == 'u' && (!strcmp(optarg, "scan") || !strcmp(optarg, "dwarf")))
				o->tracer.unwind = optarg[0] == 'd' ? MP_UNWIND_DWARF : MP_UNWIND_SCAN;
			else if (c == OPT_NO_ASLR)
				o->tracer.no_aslr = 1;
			else if (c == OPT_ONLY_FIRST)
				o->tracer.only_first = 1;
			else if (c == OPT_NO_CALIBRATE)
				o->calibrate = 0;
			else
				goto bad;
			break;
		case 'h':
			help();
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (!o->nconf)
		mp_sim_config_default(&o->conf[o->nconf++]);
	return 0;
bad:
	fprintf(stderr, "mrc-prof: bad value '%s'\n", optarg);
	return -EINVAL;
}

static char *join_command(char **argv)
{
	size_t len = 1;
	char *s;

	for (char **a = argv; *a; a++)
		len += strlen(*a) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (char **a = argv; *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

static int write_file(const char *path, const struct mp_analysis *a, int top,
		      void (*fn)(FILE *, const struct mp_analysis *, int))
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f) {
		fprintf(stderr, "mrc-prof: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	fn(f, a, top);
	if (f != stdout ? fclose(f) : fflush(f)) {
		fprintf(stderr, "mrc-prof: %s: write failed\n", path);
		return -EIO;
	}
	return 0;
}

static void counts_fn(FILE *f, const struct mp_analysis *a, int top)
{
	mp_report_counts(f, a);
}

static int outputs(const struct options *o, struct mp_trace *t)
{
	struct mp_analysis a;
	int err;

	mp_mark_library_io(t, o->library_io);
	err = mp_analysis_build(&a, t, o->conf, o->nconf);
	a.library_io = o->library_io;

	if (err) {
		fprintf(stderr, "mrc-prof: analysis: %s\n", strerror(-err));
		return err;
	}
	if (o->text)
		err = write_file(o->text, &a, o->top, mp_report_text);
	else if (!o->quiet)
		mp_report_text(stderr, &a, o->top);
	if (!err && o->json)
		err = write_file(o->json, &a, o->top, mp_report_json);
	if (!err && o->counts)
		err = write_file(o->counts, &a, o->top, counts_fn);
	if (!err && o->svg)
		err = mp_svg_write(o->svg, &a);
	mp_analysis_free(&a);
	return err;
}

static int run(struct options *o, char **cmd)
{
	struct mp_trace t;
	char prefix[4096];
	int err, status;

	o->tracer.argv = cmd;
	if (o->calibrate)
		o->tracer.overhead_ns = mp_tracer_calibrate();
	if (mp_libprof_prefix(prefix, sizeof(prefix)) == 0)
		o->tracer.libprof_prefix = prefix;
	mp_trace_init(&t);
	t.command = join_command(cmd);
	err = mp_tracer_run(&o->tracer, &t);
	if (o->tracer.libprof_prefix)
		mp_libprof_collect(prefix, &t);
	if (!err)
		err = mp_symbolize(&t);
	if (!err && o->record && (err = mp_trace_save(&t, o->record)))
		fprintf(stderr, "mrc-prof: %s: %s\n", o->record, strerror(-err));
	if (!err)
		err = outputs(o, &t);
	status = t.exit_status;
	mp_trace_free(&t);
	if (err)
		return 2;
	/* Exit as the command did, like strace and time. */
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static int replay(struct options *o, const char *path)
{
	struct mp_trace t;
	int err = mp_trace_load(&t, path);

	if (err)
		return 2;
	err = outputs(o, &t);
	mp_trace_free(&t);
	return err ? 2 : 0;
}

int main(int argc, char **argv)
{
	struct options o;
	int is_replay = argc > 1 && !strcmp(argv[1], "replay");

	memset(&o, 0, sizeof(o));
	if (is_replay) {
		argc--;
		argv++;
	}
	if (parse_args(argc, argv, is_replay, &o))
		return 2;
	if (is_replay) {
		if (optind != argc - 1) {
			fprintf(stderr, "mrc-prof: replay needs exactly one TRACE file\n");
			return 2;
		}
		return replay(&o, argv[optind]);
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	return run(&o, &argv[optind]);
}
