/* Tests for src/record/events: generic names and perf's modifier rules against what `perf evlist -v`
 * shows, libpfm4 names (with a CPU PMU forced in a child process, since this VM's CPU is newer
 * than libpfm), suggestions, list splitting, fallback, and the error explanations, including a
 * real perf_event_open of "cycles" on a machine without a PMU. */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/events.h"

#define SYSFS_PMUS "/sys/bus/event_source/devices"

static long read_long(const char *path, long dfl)
{
	FILE *f = fopen(path, "re");
	long v = dfl;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = dfl;
		fclose(f);
	}
	return v;
}

static bool have_cpu_pmu(void)
{
	return access(SYSFS_PMUS "/cpu", F_OK) == 0 || access(SYSFS_PMUS "/cpu_core", F_OK) == 0;
}

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static unsigned count_lines(const char *s)
{
	unsigned n = 1;

	for (; *s; s++)
		if (*s == '\n')
			n++;
	return n;
}

#define ck_assert_contains(hay, needle)                                                       \
	ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' not in: %s", (needle), (hay))

/* Run fn in a child process (for setuid or a freshly initialised libpfm) and fail with the
 * message it returns; NULL means success. */
static void run_in_child(const char *(*fn)(void))
{
	int fds[2];
	char msg[512] = "";
	int status;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		const char *m;

		close(fds[0]);
		m = fn();
		if (m && write(fds[1], m, strlen(m)) < 0)
			_exit(2);
		_exit(m ? 1 : 0);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: %s", msg);
}

static struct evdesc parse_ok(const char *name)
{
	struct evdesc ev;
	int r;

	memset(&ev, 0xaa, sizeof(ev));
	r = event__parse(name, &ev);
	ck_assert_msg(r == 0, "parsing '%s' failed: %s", name, strerror(-r));
	ck_assert_str_eq(ev.name, name);
	ck_assert_uint_eq(ev.attr.size, sizeof(ev.attr));
	return ev;
}

/* ---- generic ---- */

static const struct {
	const char *name;
	__u32 type;
	__u64 config;
} generic_cases[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "idle-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
};

START_TEST(test_generic_names)
{
	struct evdesc ev = parse_ok(generic_cases[_i].name);

	ck_assert_uint_eq(ev.attr.type, generic_cases[_i].type);
	ck_assert_uint_eq(ev.attr.config, generic_cases[_i].config);
	/* perf's default without modifiers (perf evlist -v: "exclude_guest: 1" only) */
	ck_assert(!ev.attr.exclude_user && !ev.attr.exclude_kernel && !ev.attr.exclude_hv);
	ck_assert(ev.attr.exclude_guest && !ev.attr.exclude_host);
	ck_assert_uint_eq(ev.attr.precise_ip, 0);
	ck_assert_uint_eq(ev.attr.sample_period, 0);
}
END_TEST

START_TEST(test_generic_case_insensitive)
{
	struct evdesc ev = parse_ok("CPU-Clock:u");

	ck_assert_uint_eq(ev.attr.type, PERF_TYPE_SOFTWARE);
	ck_assert_uint_eq(ev.attr.config, PERF_COUNT_SW_CPU_CLOCK);
	ck_assert(ev.attr.exclude_kernel);
}
END_TEST

START_TEST(test_bad_input)
{
	struct evdesc ev;
	char longname[200];

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	strcpy(ev.name, "untouched");
	ck_assert_int_eq(event__parse("", &ev), -EINVAL);
	ck_assert_int_eq(event__parse(longname, &ev), -EINVAL);
	ck_assert_int_eq(event__parse("cpu-clok", &ev), -ENOENT);
	ck_assert_int_eq(event__parse("no-such-event:u", &ev), -ENOENT);
	ck_assert_str_eq(ev.name, "untouched");
}
END_TEST

/* ---- modifiers: expected bits are what perf 6.1 `perf evlist -v` prints ---- */

static const struct {
	const char *name;
	unsigned eu, ek, eh, eg, eH, precise;
} modifier_cases[] = {
	{ "cpu-clock:u", 0, 1, 1, 1, 0, 0 },   { "cpu-clock:k", 1, 0, 1, 0, 0, 0 },
	{ "cpu-clock:h", 1, 1, 0, 0, 0, 0 },   { "cpu-clock:uk", 0, 0, 1, 1, 0, 0 },
	{ "cpu-clock:ku", 0, 0, 1, 1, 0, 0 },  { "cpu-clock:G", 0, 0, 0, 0, 1, 0 },
	{ "cpu-clock:H", 0, 0, 0, 1, 0, 0 },   { "cpu-clock:GH", 0, 0, 0, 0, 0, 0 },
	{ "cpu-clock:p", 0, 0, 0, 1, 0, 1 },   { "cpu-clock:up", 0, 1, 1, 1, 0, 1 },
	{ "task-clock:upp", 0, 1, 1, 1, 0, 2 }, { "cycles:ppp", 0, 0, 0, 1, 0, 3 },
	{ "cycles:Gu", 0, 1, 1, 0, 1, 0 },     { "r1a8:k", 1, 0, 1, 0, 0, 0 },
};

START_TEST(test_modifiers)
{
	struct evdesc ev = parse_ok(modifier_cases[_i].name);

	ck_assert_msg(ev.attr.exclude_user == modifier_cases[_i].eu &&
			      ev.attr.exclude_kernel == modifier_cases[_i].ek &&
			      ev.attr.exclude_hv == modifier_cases[_i].eh &&
			      ev.attr.exclude_guest == modifier_cases[_i].eg &&
			      ev.attr.exclude_host == modifier_cases[_i].eH,
		      "%s: u%d k%d h%d G%d H%d", modifier_cases[_i].name, ev.attr.exclude_user,
		      ev.attr.exclude_kernel, ev.attr.exclude_hv, ev.attr.exclude_guest,
		      ev.attr.exclude_host);
	ck_assert_uint_eq(ev.attr.precise_ip, modifier_cases[_i].precise);
}
END_TEST

START_TEST(test_modifier_pinned_and_bad)
{
	struct evdesc ev = parse_ok("cpu-clock:D");

	ck_assert_uint_eq(ev.attr.pinned, 1);
	ck_assert_uint_eq(ev.attr.exclude_guest, 0);
	ck_assert_int_eq(event__parse("cycles:pppp", &ev), -EINVAL);
	ck_assert_int_eq(event__parse("cycles:x", &ev), -EINVAL);
	ck_assert_int_eq(event__parse("cpu-clock:", &ev), -EINVAL);
	ck_assert_int_eq(event__parse("r1a8:q", &ev), -EINVAL);
}
END_TEST

/* ---- libpfm4 ---- */

START_TEST(test_libpfm_generic_pmu)
{
	struct evdesc ev;

	ck_assert_int_eq(events__init(), 0);
	ck_assert_int_eq(events__init(), 0);

	ev = parse_ok("PERF_COUNT_HW_CACHE_L1D:READ:MISS");
	ck_assert_uint_eq(ev.attr.type, PERF_TYPE_HW_CACHE);
	ck_assert_uint_eq(ev.attr.config, PERF_COUNT_HW_CACHE_L1D |
						  (PERF_COUNT_HW_CACHE_OP_READ << 8) |
						  (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
	ev = parse_ok("L1-dcache-load-misses");
	ck_assert_uint_eq(ev.attr.type, PERF_TYPE_HW_CACHE);
	ck_assert_uint_eq(ev.attr.config, 0x10000);

	/* libpfm's own modifiers */
	ev = parse_ok("perf::PERF_COUNT_SW_TASK_CLOCK:u");
	ck_assert_uint_eq(ev.attr.type, PERF_TYPE_SOFTWARE);
	ck_assert_uint_eq(ev.attr.config, PERF_COUNT_SW_TASK_CLOCK);
	ck_assert(!ev.attr.exclude_user && ev.attr.exclude_kernel);

	/* a generic name with libpfm-style modifiers goes to libpfm */
	ev = parse_ok("cycles:u=1:k=0");
	ck_assert_uint_eq(ev.attr.type, PERF_TYPE_HARDWARE);
	ck_assert_uint_eq(ev.attr.config, PERF_COUNT_HW_CPU_CYCLES);
	ck_assert(!ev.attr.exclude_user && ev.attr.exclude_kernel);

	/* a trailing perf modifier on a libpfm name */
	ev = parse_ok("PERF_COUNT_HW_INSTRUCTIONS:pp");
	ck_assert_uint_eq(ev.attr.type, PERF_TYPE_HARDWARE);
	ck_assert_uint_eq(ev.attr.config, PERF_COUNT_HW_INSTRUCTIONS);
	ck_assert_uint_eq(ev.attr.precise_ip, 2);

	ck_assert_int_eq(event__parse("PERF_COUNT_HW_CACHE_L1D:READ:BOGUS", &ev), -EINVAL);
}
END_TEST

/* libpfm reads LIBPFM_FORCE_PMU in pfm_initialize, so a child activates a CPU PMU as if CPUID had
 * matched. Normally (Check forks per test) libpfm is not initialised yet and events__init() does
 * it; under CK_FORK=no it is, and libpfm is restarted (which valgrind flags inside libpfm). */
static const char *force_pmu(const char *pmu)
{
	pfm_pmu_info_t info = { .size = sizeof(info) };
	bool initialised = pfm_get_pmu_info(PFM_PMU_PERF_EVENT, &info) != PFM_ERR_NOINIT;

	setenv("LIBPFM_FORCE_PMU", pmu, 1);
	if (events__init() < 0)
		return "events__init failed";
	if (initialised) {
		pfm_terminate();
		if (pfm_initialize() != PFM_SUCCESS)
			return "pfm_initialize with a forced PMU failed";
	}
	return NULL;
}

static const char *child_intel_events(void)
{
	struct evdesc ev;
	char sugg[4][64];
	const char *m = force_pmu("skl");

	if (m)
		return m;
	if (event__parse("INST_RETIRED:ANY_P", &ev))
		return "INST_RETIRED:ANY_P did not parse";
	if (ev.attr.type != PERF_TYPE_RAW || ev.attr.config != 0xc0)
		return "INST_RETIRED:ANY_P: wrong type/config";
	if (!event__is_hardware(&ev))
		return "INST_RETIRED:ANY_P is not hardware";
	if (event__parse("INST_RETIRED:ANY_P:u:c=2", &ev))
		return "INST_RETIRED:ANY_P:u:c=2 did not parse";
	if (ev.attr.config != 0x20000c0 || !ev.attr.exclude_kernel || ev.attr.exclude_user)
		return "INST_RETIRED:ANY_P:u:c=2: wrong config or exclude bits";
	if (event__parse("INST_RETIRED:ANY_P:pp", &ev) || ev.attr.precise_ip != 2 ||
	    ev.attr.config != 0xc0)
		return "INST_RETIRED:ANY_P:pp: wrong precise_ip";
	if (event__parse("INST_RETIRED:ANY_PQ", &ev) != -EINVAL)
		return "a bad umask is not -EINVAL";
	if (event__parse("INST_RETIRD", &ev) != -ENOENT)
		return "INST_RETIRD is not -ENOENT";
	if (event__suggest("INST_RETIRD", sugg, 4) < 1 || strcmp(sugg[0], "INST_RETIRED"))
		return "INST_RETIRD does not suggest INST_RETIRED first";
	return NULL;
}

static const char *child_amd_events(void)
{
	struct evdesc ev;
	const char *m = force_pmu("amd64_fam19h_zen4");

	if (m)
		return m;
	if (event__parse("RETIRED_INSTRUCTIONS:u", &ev))
		return "RETIRED_INSTRUCTIONS:u did not parse";
	if (ev.attr.type != PERF_TYPE_RAW || ev.attr.config != 0xc0 || !ev.attr.exclude_kernel ||
	    ev.attr.exclude_user)
		return "RETIRED_INSTRUCTIONS:u: wrong type, config or exclude bits";
	return NULL;
}

START_TEST(test_libpfm_cpu_pmu)
{
	run_in_child(child_intel_events);
	run_in_child(child_amd_events);
}
END_TEST

/* ---- raw and pmu/terms/ ---- */

START_TEST(test_raw_and_pmu)
{
	struct evdesc ev;
	long uprobe_type = read_long(SYSFS_PMUS "/uprobe/type", -1);

	ev = parse_ok("r1a8");
	ck_assert_uint_eq(ev.attr.type, PERF_TYPE_RAW);
	ck_assert_uint_eq(ev.attr.config, 0x1a8);
	ck_assert(ev.attr.exclude_guest);

	ev = parse_ok("software/config=0x1/");
	ck_assert_uint_eq(ev.attr.type, PERF_TYPE_SOFTWARE);
	ck_assert_uint_eq(ev.attr.config, PERF_COUNT_SW_TASK_CLOCK);
	ck_assert(!event__is_hardware(&ev));

	ev = parse_ok("software/config=3,config1=7/:u");
	ck_assert_uint_eq(ev.attr.config, 3);
	ck_assert_uint_eq(ev.attr.config1, 7);
	ck_assert(ev.attr.exclude_kernel && !ev.attr.exclude_user);

	if (uprobe_type >= 0) {
		/* terms from sysfs format/: retprobe is config:0, ref_ctr_offset config:32-63 */
		ev = parse_ok("uprobe/retprobe,ref_ctr_offset=0x10/");
		ck_assert_uint_eq(ev.attr.type, uprobe_type);
		ck_assert_uint_eq(ev.attr.config, 1 | (0x10ULL << 32));
		ck_assert_int_eq(event__parse("uprobe/retprobe=2/", &ev), -EINVAL);
	}
	ck_assert_int_eq(event__parse("nosuchpmu/config=1/", &ev), -ENOENT);
	ck_assert_int_eq(event__parse("software/bogus=1/", &ev), -EINVAL);
	ck_assert_int_eq(event__parse("software/config=1", &ev), -EINVAL);
	ck_assert_int_eq(event__parse("software/config=zz/", &ev), -EINVAL);
	ck_assert_int_eq(event__parse("software/config=1/x", &ev), -EINVAL);
	ck_assert_int_eq(event__parse("../software/config=1/", &ev), -EINVAL);
}
END_TEST

/* ---- suggestions ---- */

START_TEST(test_suggest)
{
	char s[5][64];
	size_t n;

	n = event__suggest("cpu-clok", s, 5);
	ck_assert_uint_ge(n, 1);
	ck_assert_str_eq(s[0], "cpu-clock");

	n = event__suggest("cyles", s, 5);
	ck_assert_uint_ge(n, 1);
	ck_assert_str_eq(s[0], "cycles");
	for (size_t i = 1; i < n; i++)
		ck_assert_msg(strcasecmp(s[i], "cycles"), "duplicate suggestion %s", s[i]);

	n = event__suggest("cyles:u", s, 5);
	ck_assert_uint_ge(n, 1);
	ck_assert_str_eq(s[0], "cycles");

	/* a transposition costs one edit */
	n = event__suggest("tsak-clock", s, 1);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(s[0], "task-clock");
	/* ...which is what brings "sc" (two plain edits) within the one edit allowed for "cs" */
	n = event__suggest("sc", s, 5);
	ck_assert_uint_ge(n, 1);
	ck_assert_str_eq(s[0], "cs");

	/* candidates from libpfm's detected PMUs */
	n = event__suggest("PERF_COUNT_SW_CPU_CLOK", s, 5);
	ck_assert_uint_ge(n, 1);
	ck_assert_str_eq(s[0], "PERF_COUNT_SW_CPU_CLOCK");

	/* best first: "branch-mises" is one edit from branch-misses, further from the rest */
	n = event__suggest("branch-mises", s, 5);
	ck_assert_uint_ge(n, 1);
	ck_assert_str_eq(s[0], "branch-misses");

	/* libpfm's capitalised perf aliases come back in perf's spelling */
	n = event__suggest("L1-dcache-load-mises", s, 5);
	ck_assert_uint_ge(n, 1);
	ck_assert_str_eq(s[0], "L1-dcache-load-misses");

	ck_assert_uint_eq(event__suggest("zzzzzzzzzzzz", s, 5), 0);
	ck_assert_uint_eq(event__suggest("cyles", s, 0), 0);
}
END_TEST

/* ---- lists ---- */

START_TEST(test_list)
{
	struct evdesc evs[4];
	size_t bad = 99;

	ck_assert_int_eq(events__parse_list("cycles,cpu-clock:u", evs, 4, &bad), 2);
	ck_assert_str_eq(evs[0].name, "cycles");
	ck_assert_uint_eq(evs[0].attr.type, PERF_TYPE_HARDWARE);
	ck_assert_str_eq(evs[1].name, "cpu-clock:u");
	ck_assert(evs[1].attr.exclude_kernel);

	/* commas inside pmu terms do not split */
	ck_assert_int_eq(events__parse_list("software/config=3,config1=1/,cs", evs, 4, &bad), 2);
	ck_assert_uint_eq(evs[0].attr.config, 3);
	ck_assert_uint_eq(evs[0].attr.config1, 1);
	ck_assert_str_eq(evs[1].name, "cs");

	ck_assert_int_eq(events__parse_list(" task-clock , faults ", evs, 4, &bad), 2);
	ck_assert_str_eq(evs[0].name, "task-clock");
	ck_assert_str_eq(evs[1].name, "faults");

	ck_assert_int_eq(events__parse_list("cycles,cpu-clok,cs", evs, 4, &bad), -ENOENT);
	ck_assert_uint_eq(bad, 1);
	ck_assert_int_eq(events__parse_list("cycles,cs:z", evs, 4, &bad), -EINVAL);
	ck_assert_uint_eq(bad, 1);
	ck_assert_int_eq(events__parse_list("cycles,,cs", evs, 4, &bad), -EINVAL);
	ck_assert_uint_eq(bad, 1);
	ck_assert_int_eq(events__parse_list("", evs, 4, &bad), -EINVAL);
	ck_assert_uint_eq(bad, 0);
	ck_assert_int_eq(events__parse_list("cs,cs,cs", evs, 2, &bad), -E2BIG);
	ck_assert_uint_eq(bad, 2);
}
END_TEST

/* ---- is_hardware and fallback ---- */

START_TEST(test_is_hardware)
{
	struct evdesc ev;

	ev = parse_ok("cycles");
	ck_assert(event__is_hardware(&ev));
	ev = parse_ok("L1-dcache-load-misses");
	ck_assert(event__is_hardware(&ev));
	ev = parse_ok("r1a8");
	ck_assert(event__is_hardware(&ev));
	ev = parse_ok("cpu-clock");
	ck_assert(!event__is_hardware(&ev));
	ev = parse_ok("page-faults:u");
	ck_assert(!event__is_hardware(&ev));
}
END_TEST

START_TEST(test_fallback)
{
	struct evdesc ev, fb;

	ev = parse_ok("cycles:u");
	ck_assert_int_eq(event__fallback(&ev, &fb), 0);
	ck_assert_str_eq(fb.name, "cpu-clock:u");
	ck_assert_uint_eq(fb.attr.type, PERF_TYPE_SOFTWARE);
	ck_assert_uint_eq(fb.attr.config, PERF_COUNT_SW_CPU_CLOCK);
	ck_assert(!fb.attr.exclude_user && fb.attr.exclude_kernel && fb.attr.exclude_hv);
	ck_assert(fb.attr.exclude_guest);

	ev = parse_ok("cpu-cycles:k");
	ck_assert_int_eq(event__fallback(&ev, &fb), 0);
	ck_assert_str_eq(fb.name, "cpu-clock:k");
	ck_assert(fb.attr.exclude_user && !fb.attr.exclude_kernel);

	ev = parse_ok("cycles:ppp");
	ck_assert_int_eq(event__fallback(&ev, &fb), 0);
	ck_assert_str_eq(fb.name, "cpu-clock");
	ck_assert_uint_eq(fb.attr.precise_ip, 0);

	ev = parse_ok("ref-cycles");
	ck_assert_int_eq(event__fallback(&ev, &fb), 0);

	strcpy(fb.name, "untouched");
	ev = parse_ok("instructions");
	ck_assert_int_eq(event__fallback(&ev, &fb), -ENOENT);
	ev = parse_ok("cpu-clock");
	ck_assert_int_eq(event__fallback(&ev, &fb), -ENOENT);
	ck_assert_str_eq(fb.name, "untouched");
}
END_TEST

/* ---- explanations ---- */

static void check_shape(const char *msg)
{
	ck_assert_uint_gt(strlen(msg), 20);
	ck_assert_msg(count_lines(msg) <= 2, "more than two lines: %s", msg);
	ck_assert_msg(msg[strlen(msg) - 1] != '\n', "trailing newline: %s", msg);
}

START_TEST(test_explain_errors)
{
	char buf[512], val[64];
	struct evdesc ev;
	long paranoid = read_long("/proc/sys/kernel/perf_event_paranoid", -99);

	ck_assert_int_ne(paranoid, -99);
	snprintf(val, sizeof(val), "is %ld", paranoid);

	ev = parse_ok("cpu-clock");
	event__explain_open_error(&ev, EACCES, buf, sizeof(buf));
	check_shape(buf);
	ck_assert_contains(buf, "'cpu-clock'");
	ck_assert_contains(buf, "perf_event_paranoid");
	ck_assert_contains(buf, val);
	ck_assert_contains(buf, "CAP_PERFMON");
	ck_assert_contains(buf, "sysctl kernel.perf_event_paranoid=-1");

	/* negative errno works the same */
	char buf2[512];
	event__explain_open_error(&ev, -EACCES, buf2, sizeof(buf2));
	ck_assert_str_eq(buf, buf2);

	event__explain_open_error(&ev, EMFILE, buf, sizeof(buf));
	check_shape(buf);
	ck_assert_contains(buf, "'cpu-clock'");
	ck_assert_contains(buf, "too many open files");
	ck_assert_contains(buf, "ulimit -n");

	ev = parse_ok("cycles:u");
	for (int e = 0; e < 4; e++) {
		static const int errs[] = { ENOENT, ENODEV, ENXIO, EOPNOTSUPP };

		event__explain_open_error(&ev, errs[e], buf, sizeof(buf));
		check_shape(buf);
		ck_assert_contains(buf, "'cycles:u'");
		if (have_cpu_pmu()) {
			ck_assert_contains(buf, "PMU");
		} else {
			ck_assert_contains(buf, "no hardware PMU");
			ck_assert_contains(buf, "virtual machine");
			ck_assert_contains(buf, "cpu-clock:u");
		}
	}

	ev = parse_ok("cycles:ppp");
	event__explain_open_error(&ev, EINVAL, buf, sizeof(buf));
	check_shape(buf);
	ck_assert_contains(buf, "'cycles:ppp'");
	ck_assert_contains(buf, "precise_ip=3");
	ck_assert_contains(buf, "lower the :p");

	ev = parse_ok("cycles");
	event__explain_open_error(&ev, EINVAL, buf, sizeof(buf));
	check_shape(buf);
	ck_assert_contains(buf, "'cycles'");
	ck_assert_msg(!strstr(buf, ":p"), "precise advice without precise: %s", buf);

	ev = parse_ok("task-clock");
	event__explain_open_error(&ev, ENOENT, buf, sizeof(buf));
	check_shape(buf);
	ck_assert_contains(buf, "'task-clock'");
	ck_assert_contains(buf, "not supported by this kernel");

	event__explain_open_error(&ev, EBUSY, buf, sizeof(buf));
	check_shape(buf);
	ck_assert_contains(buf, "busy");

	event__explain_open_error(&ev, EIO, buf, sizeof(buf));
	check_shape(buf);
	ck_assert_contains(buf, "'task-clock'");
	ck_assert_contains(buf, strerror(EIO));

	/* a short buffer is cut, not overrun */
	char tiny[16];
	memset(tiny, 'x', sizeof(tiny));
	ck_assert_ptr_eq(event__explain_open_error(&ev, EACCES, tiny, 10), tiny);
	ck_assert_uint_eq(strlen(tiny), 9);
	ck_assert_int_eq(tiny[10], 'x');
}
END_TEST

START_TEST(test_explain_mmap)
{
	char buf[512], val[64];
	long mlock = read_long("/proc/sys/kernel/perf_event_mlock_kb", -1);

	ck_assert_int_ge(mlock, 0);
	snprintf(val, sizeof(val), "perf_event_mlock_kb is %ld", mlock);

	events__explain_mmap_error(EPERM, 1024, buf, sizeof(buf));
	check_shape(buf);
	ck_assert_contains(buf, "1024 pages");
	ck_assert_contains(buf, val);
	ck_assert_contains(buf, "sysctl kernel.perf_event_mlock_kb=");
	ck_assert_contains(buf, "-m");

	events__explain_mmap_error(-ENOMEM, 1024, buf, sizeof(buf));
	check_shape(buf);
	ck_assert_contains(buf, "1024 pages");
	ck_assert_contains(buf, "perf_event_mlock_kb");
	ck_assert_contains(buf, "-m");

	events__explain_mmap_error(EINVAL, 3, buf, sizeof(buf));
	check_shape(buf);
	ck_assert_contains(buf, "power of two");
}
END_TEST

/* ---- real perf_event_open ---- */

START_TEST(test_open_cycles_or_fallback)
{
	struct evdesc ev, fb;
	char buf[512];
	int fd;

	ev = parse_ok("cycles:u");
	fd = sys_perf_event_open(&ev.attr, 0, -1);
	if (have_cpu_pmu()) {
		ck_assert_msg(fd >= 0, "cycles failed with a cpu PMU: %s", strerror(errno));
		close(fd);
		return;
	}
	ck_assert_int_lt(fd, 0);
	int err = errno;
	ck_assert_msg(err == ENOENT || err == ENODEV || err == ENXIO || err == EOPNOTSUPP,
		      "unexpected errno %d", err);
	event__explain_open_error(&ev, err, buf, sizeof(buf));
	ck_assert_contains(buf, "'cycles:u'");
	ck_assert_contains(buf, "cpu-clock");

	ck_assert_int_eq(event__fallback(&ev, &fb), 0);
	fd = sys_perf_event_open(&fb.attr, 0, -1);
	ck_assert_msg(fd >= 0, "%s failed: %s", fb.name, strerror(errno));
	close(fd);
}
END_TEST

START_TEST(test_open_cpu_clock_counts)
{
	struct evdesc ev = parse_ok("task-clock");
	unsigned long long value = 0;
	volatile unsigned long spin = 0;
	int fd;

	fd = sys_perf_event_open(&ev.attr, 0, -1);
	ck_assert_msg(fd >= 0, "task-clock: %s", strerror(errno));
	for (unsigned long i = 0; i < 2000000; i++)
		spin += i;
	ck_assert_int_eq(read(fd, &value, sizeof(value)), sizeof(value));
	ck_assert_uint_gt(value, 0);
	close(fd);

	ev = parse_ok("cpu-clock");
	fd = sys_perf_event_open(&ev.attr, 0, -1);
	ck_assert_msg(fd >= 0, "cpu-clock: %s", strerror(errno));
	close(fd);
}
END_TEST

/* As an unprivileged user the paranoid level decides; the explanation must quote it. */
static const char *child_unprivileged(void)
{
	static char msg[512];
	long paranoid = read_long("/proc/sys/kernel/perf_event_paranoid", 2);
	struct evdesc ev, evu;
	char val[64];
	int fd;

	if (setgid(65534) || setuid(65534))
		return "cannot drop privileges";
	if (event__parse("cpu-clock", &ev) || event__parse("cpu-clock:u", &evu))
		return "parse failed";
	fd = sys_perf_event_open(&ev.attr, 0, -1);
	if (paranoid >= 2) {
		if (fd >= 0)
			return "kernel profiling allowed despite perf_event_paranoid >= 2";
		if (errno != EACCES && errno != EPERM)
			return "unexpected errno for a forbidden event";
		event__explain_open_error(&ev, errno, msg, sizeof(msg));
		snprintf(val, sizeof(val), "perf_event_paranoid is %ld", paranoid);
		if (!strstr(msg, val) || !strstr(msg, "CAP_PERFMON") ||
		    (paranoid == 2 && !strstr(msg, "':u'")) ||
		    !strstr(msg, "sysctl kernel.perf_event_paranoid=-1"))
			return msg;
	} else if (fd < 0) {
		return "cpu-clock refused although perf_event_paranoid < 2";
	} else {
		close(fd);
	}
	fd = sys_perf_event_open(&evu.attr, 0, -1);
	if (paranoid <= 2 && fd < 0)
		return "cpu-clock:u refused for the user's own process";
	if (fd >= 0)
		close(fd);
	return NULL;
}

START_TEST(test_open_unprivileged)
{
	if (geteuid() != 0)
		return; /* already unprivileged: test_explain_errors covered the message */
	run_in_child(child_unprivileged);
}
END_TEST

Suite *events_suite(void)
{
	Suite *s = suite_create("events");
	TCase *tc;

	tc = tcase_create("generic");
	tcase_add_loop_test(tc, test_generic_names, 0,
			    sizeof(generic_cases) / sizeof(generic_cases[0]));
	tcase_add_test(tc, test_generic_case_insensitive);
	tcase_add_test(tc, test_bad_input);
	suite_add_tcase(s, tc);

	tc = tcase_create("modifiers");
	tcase_add_loop_test(tc, test_modifiers, 0,
			    sizeof(modifier_cases) / sizeof(modifier_cases[0]));
	tcase_add_test(tc, test_modifier_pinned_and_bad);
	suite_add_tcase(s, tc);

	tc = tcase_create("libpfm");
	tcase_add_test(tc, test_libpfm_generic_pmu);
	tcase_add_test(tc, test_libpfm_cpu_pmu);
	tcase_add_test(tc, test_raw_and_pmu);
	suite_add_tcase(s, tc);

	tc = tcase_create("suggest");
	tcase_add_test(tc, test_suggest);
	tcase_add_test(tc, test_list);
	suite_add_tcase(s, tc);

	tc = tcase_create("fallback");
	tcase_add_test(tc, test_is_hardware);
	tcase_add_test(tc, test_fallback);
	suite_add_tcase(s, tc);

	tc = tcase_create("explain");
	tcase_add_test(tc, test_explain_errors);
	tcase_add_test(tc, test_explain_mmap);
	suite_add_tcase(s, tc);

	tc = tcase_create("open");
	tcase_add_test(tc, test_open_cycles_or_fallback);
	tcase_add_test(tc, test_open_cpu_clock_counts);
	tcase_add_test(tc, test_open_unprivileged);
	suite_add_tcase(s, tc);

	return s;
}
