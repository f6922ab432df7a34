/* Tests for src/daemon/config: every key's values and limits, the "file:line: reason" messages
 * (unknown keys with a suggestion, keys given twice, bad values, sections, missing '='), the
 * rules between keys, comments, quotes and CRLF, and which changes need a new recording. */
#include <check.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/config.h"

static int parse(const char *text, struct daemon_config *c)
{
	return config__parse(text, strlen(text), "t.conf", c);
}

/* Parse text expecting failure; the message must contain want. */
static void expect_bad(const char *text, const char *want)
{
	struct daemon_config c;
	int err = parse(text, &c);
	const char *msg = config__error(&c);

	ck_assert_msg(err == -EINVAL, "accepted: %s", text);
	ck_assert_msg(strstr(msg, want), "message '%s' lacks '%s' (input: %s)", msg, want, text);
	/* Nothing but the reason is left to free. */
	ck_assert_ptr_null(c.event);
	ck_assert_ptr_null(c.output_dir);
	config__free(&c);
}

START_TEST(test_defaults)
{
	struct daemon_config c;

	ck_assert_int_eq(parse("socket_group = root\n", &c), 0);
	ck_assert_str_eq(config__error(&c), "");
	ck_assert(c.continuous);
	ck_assert_str_eq(c.event, "cpu-clock");
	ck_assert_uint_eq(c.frequency, 49);
	ck_assert_int_eq(c.callgraph, CALLGRAPH_DWARF);
	ck_assert(c.unwind);
	ck_assert(c.all_cgroups);
	ck_assert(c.all);
	ck_assert_str_eq(c.output_dir, "/var/lib/precord");
	ck_assert_uint_eq(c.rotate_size, 64ULL << 20);
	ck_assert_uint_eq(c.rotate_interval_ms, 3600000);
	ck_assert_uint_eq(c.max_total_size, 1ULL << 30);
	ck_assert_uint_eq(c.max_age_ms, 0);
	ck_assert_int_eq(c.compression, 1);
	ck_assert_str_eq(c.socket_path, "/run/precord/control");
	ck_assert_uint_eq(c.socket_gid, 0);
	ck_assert_uint_eq(c.control_max_duration_ms, 600000);
	ck_assert_uint_eq(c.control_max_sessions, 4);
	config__free(&c);
	ck_assert_ptr_null(c.event);
}
END_TEST

START_TEST(test_every_key)
{
	static const char text[] =
		"# a comment\n"
		"; another\n"
		"\n"
		"continuous = no\r\n"
		"event=task-clock\n"
		"  frequency   =   997  \n"
		"call_graph = dwarf,4097\n"
		"target = pid:12, cgroup:/system.slice/x.service ,pid:7\n"
		"buffer_size = 1M\n"
		"compression = 0\n"
		"output_dir = \"/tmp/a dir\"\n"
		"rotate_size = 1MiB\n"
		"rotate_interval = 250ms\n"
		"max_total_size = 3M\n"
		"max_age = 2d\n"
		"socket = /tmp/x.sock\n"
		"socket_group = root\n"
		"control_max_duration = 90s\n"
		"control_max_sessions = 0\n";
	struct daemon_config c;

	ck_assert_int_eq(parse(text, &c), 0);
	ck_assert(!c.continuous);
	ck_assert_str_eq(c.event, "task-clock");
	ck_assert_uint_eq(c.frequency, 997);
	ck_assert_int_eq(c.callgraph, CALLGRAPH_DWARF);
	ck_assert_uint_eq(c.stack_size, 4104); /* rounded up to 8 */
	ck_assert(!c.all);
	ck_assert_uint_eq(c.nr_pids, 2);
	ck_assert_int_eq(c.pids[0], 12);
	ck_assert_int_eq(c.pids[1], 7);
	ck_assert_uint_eq(c.nr_cgroups, 1);
	ck_assert_str_eq(c.cgroups[0], "/system.slice/x.service");
	ck_assert_uint_eq(c.buffer_size, 1 << 20);
	ck_assert_int_eq(c.compression, 0);
	ck_assert_str_eq(c.output_dir, "/tmp/a dir");
	ck_assert_uint_eq(c.rotate_size, 1 << 20);
	ck_assert_uint_eq(c.rotate_interval_ms, 250);
	ck_assert_uint_eq(c.max_total_size, 3 << 20);
	ck_assert_uint_eq(c.max_age_ms, 2ULL * 86400000);
	ck_assert_str_eq(c.socket_path, "/tmp/x.sock");
	ck_assert_uint_eq(c.socket_gid, 0);
	ck_assert_uint_eq(c.control_max_duration_ms, 90000);
	ck_assert_uint_eq(c.control_max_sessions, 0);
	config__free(&c);
}
END_TEST

START_TEST(test_units)
{
	static const struct { const char *text; uint64_t rotate, interval; } t[] = {
		{ "rotate_size = 65536\nrotate_interval = 30\n", 65536, 30000 },
		{ "rotate_size = 64k\nrotate_interval = 2m\n", 65536, 120000 },
		{ "rotate_size = 100KB\nrotate_interval = 1h\n", 102400, 3600000 },
		{ "rotate_size = 2M\nrotate_interval = 0\n", 2 << 20, 0 },
		{ "rotate_size = 1G\nmax_total_size = 2G\nrotate_interval = 5min\n", 1 << 30, 300000 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct daemon_config c;
		char text[256];

		snprintf(text, sizeof(text), "socket = none\n%s", t[i].text);
		ck_assert_msg(parse(text, &c) == 0, "%s: %s", t[i].text, config__error(&c));
		ck_assert_uint_eq(c.rotate_size, t[i].rotate);
		ck_assert_uint_eq(c.rotate_interval_ms, t[i].interval);
		config__free(&c);
	}
}
END_TEST

START_TEST(test_line_numbers)
{
	expect_bad("socket = none\n\n# x\nfrequncy = 3\n", "t.conf:4: unknown key 'frequncy' "
							  "(did you mean frequency?)");
	expect_bad("socket = none\nzzzzzzzz = 1\n", "t.conf:2: unknown key 'zzzzzzzz' (see");
	expect_bad("socket = none\nfrequency = 9\n\nfrequency = 10\n",
		   "t.conf:4: frequency is set twice (also on line 2)");
	expect_bad("socket = none\n[precordd]\n", "t.conf:2: sections are not used");
	expect_bad("socket = none\njust words\n", "t.conf:2: expected 'key = value'");
	expect_bad("socket = none\nevent =\n", "t.conf:2: event has no value");
	expect_bad("socket = none\nevent = \"cpu-clock\n", "t.conf:2: unbalanced double quote");
}
END_TEST

START_TEST(test_bad_values)
{
	static const struct { const char *line, *want; } t[] = {
		{ "continuous = maybe", "bad value for continuous: expected yes or no" },
		{ "event = cpu clock", "no spaces" },
		{ "frequency = 0", "bad value for frequency" },
		{ "frequency = 1000001", "bad value for frequency" },
		{ "frequency = 12abc", "bad value for frequency" },
		{ "frequency = -5", "bad value for frequency" },
		{ "call_graph = lbr", "expected fp, dwarf" },
		{ "call_graph = dwarf,70000", "dwarf stack size" },
		{ "target = pid:abc", "'pid:abc' is not a process id" },
		{ "target = pid:0", "is not a process id" },
		{ "target = cgroup:relative", "is not a cgroup path" },
		{ "target = cgroup:/a/../b", "is not a cgroup path" },
		{ "target = cgroup:/a/..", "is not a cgroup path" },
		{ "target = host", "expected all, or a list" },
		{ "target = pid:1,,pid:2", "expected all, or a list" },
		{ "cpus = 3-1", "expected a CPU list" },
		{ "buffer_size = 3000", "power of two" },
		{ "buffer_size = 3M", "power of two" },
		{ "compression = 23", "zstd level" },
		{ "output_dir = var/lib", "absolute directory" },
		{ "rotate_size = 1K", "at least 64K" },
		{ "rotate_size = 10Q", "at least 64K" },
		{ "rotate_interval = 10x", "duration of at least 100ms" },
		{ "rotate_interval = 50ms", "duration of at least 100ms" },
		{ "max_total_size = 1K", "at least 128K" },
		{ "max_age = soon", "bad value for max_age" },
		{ "socket = run/x", "absolute path" },
		{ "control_max_duration = 0", "from 1s to 1d" },
		{ "control_max_duration = 2d", "from 1s to 1d" },
		{ "control_max_sessions = 65", "from 0 to 64" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char text[256], want[128];

		snprintf(text, sizeof(text), "socket_group = none\n%s\n", t[i].line);
		snprintf(want, sizeof(want), "t.conf:2: ");
		expect_bad(text, want);
		expect_bad(text, t[i].want);
	}
}
END_TEST

START_TEST(test_whole_file_rules)
{
	/* the budget must hold two files: reported at the max_total_size line */
	expect_bad("socket = none\nrotate_size = 1M\nmax_total_size = 1536K\n",
		   "t.conf:3: max_total_size (1572864 bytes) must hold at least two files");
	/* ... or for the whole file when the default is what breaks it */
	expect_bad("socket = none\nrotate_size = 600M\n", "t.conf: max_total_size");
	expect_bad("socket = none\ntarget = pid:1\ncpus = 0\n", "t.conf:3: cpus applies to");
	expect_bad("socket_group = no-such-group-here\n",
		   "t.conf:1: socket_group 'no-such-group-here' does not exist");
	if (!getgrnam("precord")) {
		struct daemon_config c;

		/* the default group need not exist: root only then */
		ck_assert_int_eq(parse("frequency = 5\n", &c), 0);
		ck_assert_str_eq(c.socket_group, "precord");
		ck_assert_uint_eq(c.socket_gid, (gid_t)-1);
		config__free(&c);
	}
	{
		struct daemon_config c;

		/* no socket: the group is not looked up */
		ck_assert_int_eq(parse("socket = none\nsocket_group = no-such-group-here\n", &c), 0);
		ck_assert_ptr_null(c.socket_path);
		ck_assert_uint_eq(c.socket_gid, (gid_t)-1);
		config__free(&c);
		ck_assert_int_eq(parse("socket_group = none\n", &c), 0);
		ck_assert_ptr_null(c.socket_group);
		ck_assert_uint_eq(c.socket_gid, (gid_t)-1);
		config__free(&c);
	}
}
END_TEST

/* The export keys: values, defaults, hostile spellings, and the rules with push_url. */
START_TEST(test_push_keys)
{
	static const struct { const char *line, *want; } t[] = {
		{ "pprof = sometimes", "bad value for pprof: expected yes or no" },
		{ "push_url = pyroscope:4040", "expected the server's URL" },
		{ "push_url = ftp://h/", "expected the server's URL" },
		{ "push_url = http://", "no host" },
		{ "push_url = http://:4040", "no host" },
		{ "push_url = http://u:p@h:4040", "user:password@ is not taken" },
		{ "push_url = http://h:4040/ingest?x=1", "no query or fragment" },
		{ "push_url = http://h:99999", "not a number from 1 to 65535" },
		{ "push_url = http://h:0/", "not a number from 1 to 65535" },
		{ "push_url = http://h:", "not a number from 1 to 65535" },
		{ "push_url = http://h:40x0", "not a number from 1 to 65535" },
		{ "push_url = http://h:4040:1", "more than one ':'" },
		{ "push_url = http://[::1:80", "goes between [ and ]" },
		{ "push_url = http://[]:80", "goes between [ and ]" },
		{ "push_url = http://[::1]x", "expected :PORT or /" },
		{ "push_url = http://[::1]:", "not a number from 1 to 65535" },
		{ "push_url = http://h:4040/#top", "no query or fragment" },
		{ "push_url = http://h 4040", "a blank or a character" },
		{ "push_url = http://h\\x", "a blank or a character" },
		{ "push_url = \"http://h<>\"", "a blank or a character" },
		{ "push_url = http://h:4040\npush_name = my app", "bad value for push_name" },
		{ "push_url = http://h:4040\npush_name = a{b}", "bad value for push_name" },
		{ "push_url = http://h:4040\npush_labels = env", "expected key=value pairs" },
		{ "push_url = http://h:4040\npush_labels = 1x=a", "label name '1x'" },
		{ "push_url = http://h:4040\npush_labels = e-nv=a", "label name 'e-nv'" },
		{ "push_url = http://h:4040\npush_labels = __name__=a", "are reserved" },
		{ "push_url = http://h:4040\npush_labels = env=a b", "the value of label env" },
		{ "push_url = http://h:4040\npush_labels = env=a}", "the value of label env" },
		{ "push_url = http://h:4040\npush_labels = env=", "the value of label env" },
		{ "push_url = http://h:4040\npush_labels = a=b,", "expected key=value pairs" },
		{ "push_url = http://h:4040\npush_timeout = 10ms", "from 100ms to 1h" },
		{ "push_url = http://h:4040\npush_timeout = 2h", "from 100ms to 1h" },
		{ "push_url = http://h:4040\npush_spool_size = 1K", "at least 64K" },
		{ "push_name = app", "push_name applies when pushing only: set push_url" },
		{ "push_timeout = 5s", "push_timeout applies when pushing only" },
		{ "push_url = http://h:4040\nmax_total_size = 2G\npush_spool_size = 3G",
		  "push_spool_size (3221225472 bytes) must fit in max_total_size" },
		{ "push_url = http://h:4040\nrotate_size = 64K\nmax_total_size = 128K",
		  "pushing needs a spool of at least 64K" },
	};
	struct daemon_config c;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char text[512];

		snprintf(text, sizeof(text), "socket_group = none\n%s\n", t[i].line);
		expect_bad(text, t[i].want);
	}
	/* defaults: no export; the spool takes an eighth of the budget */
	ck_assert_int_eq(parse("socket = none\n", &c), 0);
	ck_assert(!c.pprof);
	ck_assert_ptr_null(c.push_url);
	ck_assert_str_eq(c.push_name, "precordd");
	ck_assert_ptr_null(c.push_labels);
	ck_assert_uint_eq(c.push_timeout_ms, 30000);
	config__free(&c);
	ck_assert_int_eq(parse("socket = none\npprof = yes\npush_url = https://pyro.example:4040/base//\n"
			       "push_name = fleet.app-1\npush_labels = env=prod,dc=eu_1\n"
			       "push_timeout = 5s\n", &c), 0);
	ck_assert(c.pprof);
	ck_assert_str_eq(c.push_url, "https://pyro.example:4040/base");
	ck_assert_str_eq(c.push_name, "fleet.app-1");
	ck_assert_str_eq(c.push_labels, "env=prod,dc=eu_1");
	ck_assert_uint_eq(c.push_timeout_ms, 5000);
	ck_assert_uint_eq(c.push_spool_size, (1ULL << 30) / 8);
	config__free(&c);
	/* a small budget: what two files leave */
	ck_assert_int_eq(parse("socket = none\npush_url = http://h\nrotate_size = 1M\n"
			       "max_total_size = 2304K\n", &c), 0);
	ck_assert_uint_eq(c.push_spool_size, 256 << 10);
	config__free(&c);
	/* IPv6 in brackets, with and without a port; a name without one */
	ck_assert_int_eq(parse("socket = none\npush_url = http://[::1]:4040/p\n", &c), 0);
	ck_assert_str_eq(c.push_url, "http://[::1]:4040/p");
	config__free(&c);
	ck_assert_int_eq(parse("socket = none\npush_url = https://[fe80::1]\n", &c), 0);
	config__free(&c);
	ck_assert_int_eq(parse("socket = none\npush_url = http://pyro.example:65535\n", &c), 0);
	config__free(&c);
	/* none turns pushing off again */
	ck_assert_int_eq(parse("socket = none\npush_url = none\n", &c), 0);
	ck_assert_ptr_null(c.push_url);
	config__free(&c);
}
END_TEST

START_TEST(test_binary_and_long)
{
	struct daemon_config c;
	char *big;
	const char nul[] = "socket = none\nevent = a\0b\n";

	ck_assert_int_eq(config__parse(nul, sizeof(nul) - 1, "t.conf", &c), -EINVAL);
	ck_assert_ptr_nonnull(strstr(config__error(&c), "t.conf:2: a NUL byte"));
	big = malloc(10000);
	ck_assert_ptr_nonnull(big);
	memset(big, 'x', 9999);
	big[9999] = 0;
	ck_assert_int_eq(parse(big, &c), -EINVAL);
	ck_assert_ptr_nonnull(strstr(config__error(&c), "t.conf:1: line longer than"));
	free(big);
}
END_TEST

START_TEST(test_same_recording)
{
	struct daemon_config a, b;

	ck_assert_int_eq(parse("socket = none\nfrequency = 99\n", &a), 0);
	ck_assert_int_eq(parse("socket = none\nfrequency = 99\nmax_age = 1h\n"
			       "rotate_size = 1M\n", &b), 0);
	ck_assert(config__same_recording(&a, &b)); /* retention and rotation apply live */
	config__free(&b);
	ck_assert_int_eq(parse("socket = none\nfrequency = 98\n", &b), 0);
	ck_assert(!config__same_recording(&a, &b));
	config__free(&b);
	ck_assert_int_eq(parse("socket = none\nfrequency = 99\ntarget = pid:1\n", &b), 0);
	ck_assert(!config__same_recording(&a, &b));
	config__free(&b);
	ck_assert_int_eq(parse("socket = none\nfrequency = 99\noutput_dir = /x\n", &b), 0);
	ck_assert(!config__same_recording(&a, &b));
	config__free(&b);
	config__free(&a);
}
END_TEST

START_TEST(test_load)
{
	char path[] = "/tmp/check_config.XXXXXX";
	struct daemon_config c;
	int fd = mkstemp(path);
	const char text[] = "socket = none\nfrequency = 3\nrotate_size = 64\n";

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	ck_assert_int_eq(config__load(path, &c), -EINVAL);
	ck_assert_msg(strstr(config__error(&c), ":3: bad value for rotate_size") &&
		      strstr(config__error(&c), path), "%s", config__error(&c));
	unlink(path);
	ck_assert_int_eq(config__load(path, &c), -ENOENT);
	ck_assert_ptr_nonnull(strstr(config__error(&c), "cannot read"));
	ck_assert_int_eq(config__load("/tmp", &c), -EINVAL);
	ck_assert_ptr_nonnull(strstr(config__error(&c), "/tmp: not a regular file"));
	/* a FIFO is refused at once, not waited on for a writer */
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(config__load(path, &c), -EINVAL);
	ck_assert_ptr_nonnull(strstr(config__error(&c), "not a regular file"));
	unlink(path);
}
END_TEST

Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("values");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_every_key);
	tcase_add_test(tc, test_units);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_add_test(tc, test_line_numbers);
	tcase_add_test(tc, test_bad_values);
	tcase_add_test(tc, test_whole_file_rules);
	tcase_add_test(tc, test_push_keys);
	tcase_add_test(tc, test_binary_and_long);
	tcase_add_test(tc, test_load);
	suite_add_tcase(s, tc);
	tc = tcase_create("reload");
	tcase_add_test(tc, test_same_recording);
	suite_add_tcase(s, tc);
	return s;
}
