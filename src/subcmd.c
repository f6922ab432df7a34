/* precord bench: measurements shaped like perf bench's, so the two can be compared side by side
 * (bench/run.sh prints the ratios). */
#include "subcmd.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synthesize.h"

static void bench_usage(FILE *f)
{
	fprintf(f, "usage: precord bench synthesize [-t] [-s N] [-m N] [-I N] [-i N]\n"
		   "  -t, --mt             multi-threaded synthesis of every process (as perf's -t)\n"
		   "  -s, --min-threads N  fewest threads to try (default 1)\n"
		   "  -m, --max-threads N  most threads to try (default: online CPUs)\n"
		   "  -i, --single-iterations N  iterations for this process alone (default 10000)\n"
		   "  -I, --multi-iterations N   iterations for every process (default 10)\n");
}

static int bench_synthesize(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mt", no_argument, NULL, 't' },
		{ "min-threads", required_argument, NULL, 's' },
		{ "max-threads", required_argument, NULL, 'm' },
		{ "single-iterations", required_argument, NULL, 'i' },
		{ "multi-iterations", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct synth_bench_opts o = { 0 };
	bool threads = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "ts:m:i:I:h", lo, NULL)) != -1) {
		char *end;
		unsigned long v = 0;

		if (c != 't' && c != 'h') {
			v = strtoul(optarg, &end, 10);
			if (*end || !v || v > 1000000) {
				fprintf(stderr, "precord bench synthesize: invalid number '%s' for -%c\n", optarg, c);
				return 2;
			}
		}
		switch (c) {
		case 't': threads = true; break;
		case 's': o.min_threads = v; break;
		case 'm': o.max_threads = v; break;
		case 'i': o.single_iterations = v; break;
		case 'I': o.multi_iterations = v; break;
		case 'h': bench_usage(stdout); return 0;
		default: bench_usage(stderr); return 2;
		}
	}
	if (synthesize__bench(stdout, threads, &o) < 0) {
		fprintf(stderr, "precord bench synthesize: failed: %m\n");
		return 1;
	}
	return 0;
}

int subcmd_bench(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "synthesize"))
		return bench_synthesize(argc - 1, argv + 1);
	fprintf(stderr, "usage: precord bench synthesize [-t]\n");
	return 2;
}
