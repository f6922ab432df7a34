/* precordd: the recorder as a service. Parses the command line, loads the configuration and
 * hands over to the service loop (src/daemon.c); logs go to stderr, with the "<N>" priority
 * prefixes the journal understands when stderr is connected to it. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#include "daemon/compact.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/export.h"
#include "daemon/isolate.h"

/* Exit codes: see man/precordd.8, EXIT STATUS. */
enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_CONFIG = 78 /* EX_CONFIG */ };

static bool journal, verbose;

static void usage(FILE *f)
{
	fprintf(f,
"usage: precordd [--config FILE] [--check] [--verbose]\n"
"\n"
"  -c, --config FILE   configuration (default " CONFIG_DEFAULT_PATH ")\n"
"  -t, --check         check the configuration and exit (0 when it is valid)\n"
"  -v, --verbose       also log each deleted file\n"
"  -h, --help          this text\n"
"      --version       precordd's version\n"
"\n"
"Signals: SIGTERM or SIGINT stop (files finalized), SIGHUP reloads the configuration.\n"
"See precordd(8) and precordd.conf(5).\n");
}

/* JOURNAL_STREAM is "DEV:INODE" of the journal's stream; stderr must be that very stream. */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static void on_log(void *ctx, int prio, const char *msg)
{
	if (prio == LOG_DEBUG && !verbose)
		return;
	if (journal)
		fprintf(stderr, "<%d>%s\n", prio, msg);
	else
		fprintf(stderr, "precordd: %s\n", msg);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	const char *config = CONFIG_DEFAULT_PATH;
	bool check = false;
	struct daemon_opts o = { .log = on_log };
	struct daemon *d;
	int c, err;

	/* a conversion of the service's, in a process of its own (see daemon/isolate.h) */
	if (argc > 1 && !strcmp(argv[1], ISOLATE_ARG)) {
		static const struct isolate_kind kinds[] = {
			{ "unwind", compactor__child_main },
			{ "export", export__child_main },
			{ NULL, NULL },
		};
		return isolate__child_main(argc, argv, kinds);
	}
	while ((c = getopt_long(argc, argv, "c:tvh", lo, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 't': check = true; break;
		case 'v': verbose = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("precordd " PRECORD_VERSION "\n"); return 0;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "precordd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	setvbuf(stderr, NULL, _IOLBF, 0);
	journal = stderr_is_journal();
	if (check) {
		struct daemon_config cfg;

		err = config__load(config, &cfg);
		if (err) {
			fprintf(stderr, "precordd: %s\n", config__error(&cfg));
			return EXIT_CONFIG;
		}
		err = daemon__check_recording(&cfg);
		if (err)
			fprintf(stderr, "precordd: %s: %s\n", config, config__error(&cfg));
		config__free(&cfg);
		if (err)
			return EXIT_CONFIG;
		printf("%s: valid\n", config);
		return 0;
	}
	o.config_path = config;
	d = daemon__new(&o);
	if (!d) {
		on_log(NULL, LOG_ERR, strerror(errno));
		return EXIT_RUNTIME;
	}
	err = daemon__setup(d);
	if (err) {
		on_log(NULL, LOG_ERR, daemon__error(d));
		daemon__free(d);
		/* EINVAL: the configuration is wrong; anything else is the environment */
		return err == -EINVAL ? EXIT_CONFIG : EXIT_RUNTIME;
	}
	err = daemon__run(d);
	if (err) {
		char line[600];

		snprintf(line, sizeof(line), "%s", daemon__error(d));
		on_log(NULL, LOG_ERR, line);
	}
	daemon__free(d);
	return err ? EXIT_RUNTIME : 0;
}
