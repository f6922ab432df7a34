/* Tests for src/lib/parse: one table of sizes, durations, frequencies, call-graph modes and
 * cgroup paths, fed to every front end that reads them — the parser itself, precordd's config
 * file, the control socket's request parser, precord's command line and `precord ctl record`'s
 * — which must all accept and refuse the same strings (and agree on the value where they can
 * show it). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/parse.h"
#include "daemon/config.h"
#include "daemon/ctl.h"

enum kind { FREQ, CALLGRAPH, SIZE, DURATION, CGROUP };

static const struct pcase {
	enum kind kind;
	const char *in;
	bool ok;
	uint64_t want;  /* the value (for CALLGRAPH: mode * 100000 + stack bytes) */
} cases[] = {
	{ FREQ, "1", true, 1 },
	{ FREQ, "4000", true, 4000 },
	{ FREQ, "1000000", true, 1000000 },
	{ FREQ, "1000001", false, 0 },
	{ FREQ, "0", false, 0 },
	{ FREQ, "-5", false, 0 },
	{ FREQ, "+5", false, 0 },
	{ FREQ, "12abc", false, 0 },
	{ FREQ, "0x10", false, 0 },
	{ FREQ, "4e3", false, 0 },
	{ FREQ, "99999999999999999999999", false, 0 },
	{ FREQ, "", false, 0 },

	{ CALLGRAPH, "dwarf", true, CALLGRAPH_DWARF * 100000 + 8192 },
	{ CALLGRAPH, "fp", true, CALLGRAPH_FP * 100000 },
	{ CALLGRAPH, "none", true, CALLGRAPH_NONE * 100000 },
	{ CALLGRAPH, "dwarf,16384", true, CALLGRAPH_DWARF * 100000 + 16384 },
	{ CALLGRAPH, "dwarf,16K", true, CALLGRAPH_DWARF * 100000 + 16384 },
	{ CALLGRAPH, "dwarf,4097", true, CALLGRAPH_DWARF * 100000 + 4104 },
	{ CALLGRAPH, "dwarf,8", true, CALLGRAPH_DWARF * 100000 + 8 },
	{ CALLGRAPH, "dwarf,65528", true, CALLGRAPH_DWARF * 100000 + 65528 },
	{ CALLGRAPH, "dwarf,65529", false, 0 },
	{ CALLGRAPH, "dwarf,7", false, 0 },
	{ CALLGRAPH, "dwarf,", false, 0 },
	{ CALLGRAPH, "dwarf,-8", false, 0 },
	{ CALLGRAPH, "dwarfish", false, 0 },
	{ CALLGRAPH, "lbr", false, 0 },
	{ CALLGRAPH, "FP", false, 0 },
	{ CALLGRAPH, "", false, 0 },

	{ SIZE, "128M", true, 128ULL << 20 },
	{ SIZE, "1G", true, 1ULL << 30 },
	{ SIZE, "1GiB", true, 1ULL << 30 },
	{ SIZE, "1gb", true, 1ULL << 30 },
	{ SIZE, "1024MB", true, 1ULL << 30 },
	{ SIZE, "4G", true, 4ULL << 30 },
	{ SIZE, "1X", false, 0 },
	{ SIZE, "G", false, 0 },
	{ SIZE, "-1G", false, 0 },
	{ SIZE, "1.5G", false, 0 },
	{ SIZE, "1KK", false, 0 },
	{ SIZE, "0x10M", false, 0 },
	{ SIZE, "99999999999999999999G", false, 0 },
	{ SIZE, "", false, 0 },

	{ DURATION, "30", true, 30000 },
	{ DURATION, "1.5s", true, 1500 },
	{ DURATION, "1500ms", true, 1500 },
	{ DURATION, "90min", true, 5400000 },
	{ DURATION, "10m", true, 600000 },
	{ DURATION, "2h", true, 7200000 },
	{ DURATION, "1d", true, 86400000 },
	{ DURATION, "1w", false, 0 },
	{ DURATION, "s", false, 0 },
	{ DURATION, "-5", false, 0 },
	{ DURATION, "1.s", false, 0 },
	{ DURATION, ".5s", false, 0 },
	{ DURATION, "0x10", false, 0 },
	{ DURATION, "1.1234567891s", false, 0 },
	{ DURATION, "", false, 0 },

	{ CGROUP, "/", true, 0 },
	{ CGROUP, "/user.slice", true, 0 },
	{ CGROUP, "/user.slice/user-1000.slice/app@1.service/x.scope", true, 0 },
	{ CGROUP, "/a/.b", true, 0 },
	{ CGROUP, "/a/..b/c...", true, 0 },
	{ CGROUP, "relative", false, 0 },
	{ CGROUP, "/a/.", false, 0 },
	{ CGROUP, "/a/..", false, 0 },
	{ CGROUP, "/a/../b", false, 0 },
	{ CGROUP, "/./a", false, 0 },
	{ CGROUP, "/a//b", false, 0 },
	{ CGROUP, "//", false, 0 },
	{ CGROUP, "/a/", false, 0 },
	{ CGROUP, "/a,b", false, 0 },
	{ CGROUP, "/a\x01", false, 0 },
	{ CGROUP, "", false, 0 },
	{ CGROUP, "/" /* 300 bytes */
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "aaaaaaaaaa", false, 0 },
};

static const char *kind_name[] = { "frequency", "call graph", "size", "duration", "cgroup" };

/* ---- the entry points: each returns 1 accepted (with *val when it can tell), 0 refused,
 * -1 not applicable ---- */

static int via_lib(const struct pcase *c, uint64_t *val)
{
	enum callgraph_mode m;
	uint32_t stack;
	int r = -EINVAL;

	switch (c->kind) {
	case FREQ: r = parse__freq(c->in, val); break;
	case SIZE: r = parse__size(c->in, val, NULL); break;
	case DURATION: r = parse__duration_ms(c->in, val); break;
	case CGROUP: r = parse__cgroup_path(c->in); break;
	case CALLGRAPH:
		r = parse__callgraph(c->in, &m, &stack);
		if (!r)
			*val = (uint64_t)m * 100000 + stack;
		break;
	}
	return r == 0;
}

static int via_config(const struct pcase *c, uint64_t *val)
{
	static const char *key[] = { [FREQ] = "frequency = ", [CALLGRAPH] = "call_graph = ",
				     [SIZE] = "max_total_size = ",
				     [DURATION] = "control_max_duration = ",
				     [CGROUP] = "target = cgroup:" };
	struct daemon_config cfg;
	char text[1024];
	int r;

	snprintf(text, sizeof(text), "socket = none\n%s%s\n", key[c->kind], c->in);
	r = config__parse(text, strlen(text), "t.conf", &cfg);
	if (r < 0) {
		ck_assert_msg(r == -EINVAL && *config__error(&cfg), "config, '%s': %d with no reason",
			      c->in, r);
		return 0;
	}
	switch (c->kind) {
	case FREQ: *val = cfg.frequency; break;
	case SIZE: *val = cfg.max_total_size; break;
	case DURATION: *val = cfg.control_max_duration_ms; break;
	case CALLGRAPH:
		*val = (uint64_t)cfg.callgraph * 100000 +
		       (cfg.callgraph == CALLGRAPH_DWARF ? cfg.stack_size : 0);
		break;
	case CGROUP:
		ck_assert_uint_eq(cfg.nr_cgroups, 1);
		ck_assert_str_eq(cfg.cgroups[0], c->in);
		break;
	}
	config__free(&cfg);
	return 1;
}

static int via_socket(const struct pcase *c, uint64_t *val)
{
	static const char *fmt[] = { [FREQ] = "record pid=1 frequency=%s",
				     [CALLGRAPH] = "record pid=1 call_graph=%s",
				     [DURATION] = "record pid=1 duration=%s",
				     [CGROUP] = "record cgroup=%s", [SIZE] = NULL };
	struct ctl_request req;
	char line[1024];
	int n;

	if (!fmt[c->kind])
		return -1;
	n = snprintf(line, sizeof(line), fmt[c->kind], c->in);
	if (ctl__parse_request(line, (size_t)n, &req) < 0) {
		ck_assert_msg(*ctl__request_error(&req), "socket, '%s': refused with no reason", c->in);
		return 0;
	}
	switch (c->kind) {
	case FREQ: *val = req.frequency; break;
	case DURATION: *val = req.duration_ms; break;
	case CALLGRAPH: *val = (uint64_t)req.callgraph * 100000 + req.stack_size; break;
	case CGROUP: ck_assert_str_eq(req.cgroup, c->in); break;
	case SIZE: break;
	}
	return 1;
}

/* Run argv, return its exit status and the start of its stderr in err. */
static int run(char *const argv[], char *err, size_t size)
{
	int p[2], st;
	ssize_t n;
	size_t len = 0;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		dup2(p[1], 2);
		execv(argv[0], argv);
		_exit(99);
	}
	close(p[1]);
	while (len + 1 < size && (n = read(p[0], err + len, size - 1 - len)) > 0)
		len += (size_t)n;
	err[len] = 0;
	while (read(p[0], &st, sizeof(st)) > 0)
		;
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 99, "%s did not run", argv[0]);
	return WEXITSTATUS(st);
}

static void precord_path(char *buf, size_t size)
{
	const char *top = getenv("PRECORD_TOP") ? getenv("PRECORD_TOP") : ".";

	snprintf(buf, size, "%s/precord", top);
	ck_assert_msg(access(buf, X_OK) == 0, "no %s (make test-bins)", buf);
}

/* precord's options, with no target: an accepted value gets to "nothing to record". */
static int via_precord(const struct pcase *c, uint64_t *val)
{
	static const char *opt[] = { [FREQ] = "-F", [CALLGRAPH] = "--call-graph", [SIZE] = "-m",
				     [DURATION] = NULL, [CGROUP] = NULL };
	char bin[1024], err[4096];
	int st;

	if (!opt[c->kind])
		return -1;
	precord_path(bin, sizeof(bin));
	st = run((char *const[]){ bin, (char *)opt[c->kind], (char *)c->in, NULL }, err,
		 sizeof(err));
	ck_assert_msg(st == 2, "precord %s '%s': exit %d", opt[c->kind], c->in, st);
	if (strstr(err, "nothing to record"))
		return 1;
	ck_assert_msg(strstr(err, "precord: invalid") && strstr(err, c->in),
		      "precord %s '%s': %s", opt[c->kind], c->in, err);
	return 0;
}

/* precord ctl record's options, to a socket that does not exist: an accepted value gets to
 * "cannot connect" (exit 1), a refused one exits 2 naming the option's value. */
static int via_ctl_client(const struct pcase *c, uint64_t *val)
{
	static const char *opt[] = { [FREQ] = "-F", [CALLGRAPH] = "--call-graph", [SIZE] = NULL,
				     [DURATION] = "-d", [CGROUP] = "--cgroup" };
	char bin[1024], err[4096];
	int st;

	if (!opt[c->kind])
		return -1;
	precord_path(bin, sizeof(bin));
	if (c->kind == CGROUP)
		st = run((char *const[]){ bin, "ctl", "-s", "/nonexistent/precord-test", "record",
					  (char *)opt[c->kind], (char *)c->in, NULL }, err,
			 sizeof(err));
	else
		st = run((char *const[]){ bin, "ctl", "-s", "/nonexistent/precord-test", "record",
					  (char *)opt[c->kind], (char *)c->in, "-p", "1", NULL },
			 err, sizeof(err));
	if (st == 1 && strstr(err, "cannot connect"))
		return 1;
	ck_assert_msg(st == 2 && strstr(err, "precord ctl record:"),
		      "precord ctl record %s '%s': exit %d, %s", opt[c->kind], c->in, st, err);
	return 0;
}

static const struct entry {
	const char *name;
	int (*parse)(const struct pcase *c, uint64_t *val);
	bool shows_value;
} entries[] = {
	{ "lib/parse", via_lib, true },
	{ "precordd.conf", via_config, true },
	{ "control socket", via_socket, true },
	{ "precord", via_precord, false },
	{ "precord ctl record", via_ctl_client, false },
};

START_TEST(test_every_entry_point)
{
	const struct pcase *c = &cases[_i];

	for (size_t e = 0; e < sizeof(entries) / sizeof(entries[0]); e++) {
		uint64_t val = UINT64_MAX;
		int r = entries[e].parse(c, &val);

		if (r < 0)
			continue;
		ck_assert_msg(r == c->ok, "%s %s '%s': %s, expected %s", entries[e].name,
			      kind_name[c->kind], c->in, r ? "accepted" : "refused",
			      c->ok ? "accepted" : "refused");
		if (r && entries[e].shows_value && c->kind != CGROUP)
			ck_assert_msg(val == c->want, "%s %s '%s': %llu, expected %llu",
				      entries[e].name, kind_name[c->kind], c->in,
				      (unsigned long long)val, (unsigned long long)c->want);
	}
}
END_TEST

/* preport --since/--until: epoch seconds, UTC with Z, local time as mktime reads it, today by
 * default; malformed times refused. */
START_TEST(test_wall_time)
{
	const time_t now = 1796114816;                  /* 2026-12-01T08:46:56Z */
	struct tm tm;
	uint64_t ns = 0;

	ck_assert_int_eq(parse__wall_time("@1796114816.5", now, &ns), 0);
	ck_assert_uint_eq(ns, 1796114816500000000ull);
	ck_assert_int_eq(parse__wall_time("2026-12-01T10:05:00Z", now, &ns), 0);
	ck_assert_uint_eq(ns, 1796119500000000000ull);
	ck_assert_int_eq(parse__wall_time("2026-12-01 10:05:00.25Z", now, &ns), 0);
	ck_assert_uint_eq(ns, 1796119500250000000ull);
	ck_assert_int_eq(parse__wall_time("10:05Z", now, &ns), 0);        /* today, UTC */
	ck_assert_uint_eq(ns, 1796119500000000000ull);
	ck_assert_int_eq(parse__wall_time("2026-12-01Z", now, &ns), 0);
	ck_assert_uint_eq(ns, 1796083200000000000ull);
	localtime_r(&now, &tm);
	tm.tm_hour = 10;
	tm.tm_min = 5;
	tm.tm_sec = 7;
	tm.tm_isdst = -1;
	ck_assert_int_eq(parse__wall_time("10:05:07", now, &ns), 0);      /* today, local */
	ck_assert_uint_eq(ns, (uint64_t)mktime(&tm) * 1000000000ull);
	static const char *const bad[] = { "", "@", "@12x", "10", "10:", "25:00", "10:05:07x",
					   "2026-13-01", "2026-12-01 10", "yesterday", "10:05.5",
					   "2026-12-01X10:00", "@1.", "-5" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse__wall_time(bad[i], now, &ns) < 0, "'%s' accepted", bad[i]);
}
END_TEST

Suite *parse_suite(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("entry points");

	tcase_add_loop_test(tc, test_every_entry_point, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_wall_time);
	suite_add_tcase(s, tc);
	return s;
}
