/* Tests for unwind/machine, map_snapshot and dso: the process/thread/map state machine (mmap replacement, fork, exec,
 * exit, kernel maps, raw record decoding) and the snapshot contract: a snapshot taken earlier
 * never changes while newer records apply, and can be used and dropped from other threads. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "unwind/machine.h"

#define RX (PROT_READ | PROT_EXEC)

static struct machine *new_machine(void)
{
	struct machine *m = machine__new(NULL);

	ck_assert_ptr_nonnull(m);
	return m;
}

static const char *name_at(struct map_snapshot *s, uint64_t addr)
{
	const struct map *mp = map_snapshot__find(s, addr);

	return mp ? dso__name(mp->dso) : NULL;
}

START_TEST(test_mmap_find_and_order)
{
	struct machine *m = new_machine();
	struct map_snapshot *s;
	const struct map *mp;

	ck_assert_int_eq(machine__mmap(m, 10, 0x3000, 0x1000, 0, RX, "/c", NULL, 0), 0);
	ck_assert_int_eq(machine__mmap(m, 10, 0x1000, 0x1000, 0x5000, RX, "/a", NULL, 0), 0);
	ck_assert_int_eq(machine__mmap(m, 10, 0x2000, 0x1000, 0, RX, "//anon", NULL, 0), 0);
	s = machine__snapshot(m, 10);
	ck_assert_uint_eq(map_snapshot__nr(s), 3);
	ck_assert_uint_eq(map_snapshot__map(s, 0)->start, 0x1000);
	ck_assert_uint_eq(map_snapshot__map(s, 1)->start, 0x2000);
	ck_assert_uint_eq(map_snapshot__map(s, 2)->start, 0x3000);
	ck_assert_ptr_null(map_snapshot__map(s, 3));
	mp = map_snapshot__find(s, 0x1fff);
	ck_assert_ptr_nonnull(mp);
	ck_assert_str_eq(dso__name(mp->dso), "/a");
	ck_assert_uint_eq(mp->pgoff, 0x5000);
	ck_assert_int_eq(dso__kind(mp->dso), DSO_FILE);
	ck_assert_int_eq(dso__kind(map_snapshot__find(s, 0x2000)->dso), DSO_ANON);
	ck_assert_ptr_null(map_snapshot__find(s, 0xfff));
	ck_assert_ptr_null(map_snapshot__find(s, 0x4000));
	ck_assert_int_eq(map_snapshot__pid(s), 10);
	/* One dso per name, shared by every map naming it. */
	ck_assert_int_eq(machine__mmap(m, 11, 0x9000, 0x1000, 0, RX, "/a", NULL, 0), 0);
	{
		struct map_snapshot *s11 = machine__snapshot(m, 11);

		ck_assert_ptr_eq(map_snapshot__find(s11, 0x9000)->dso, mp->dso);
		map_snapshot__put(s11);
	}
	/* A file that does not exist: no ELF, no symbols, no crash. */
	ck_assert_ptr_null(dso__elf(mp->dso));
	ck_assert_ptr_null(dso__symtab(mp->dso));
	map_snapshot__put(s);
	machine__free(m);
}
END_TEST

START_TEST(test_overlap_replaces_and_splits)
{
	struct machine *m = new_machine();
	struct map_snapshot *s0, *s1, *s2;
	const struct map *mp;

	ck_assert_int_eq(machine__mmap(m, 1, 0x10000, 0x10000, 0x100000, RX, "/big", NULL, 0), 0);
	s0 = machine__snapshot(m, 1);
	/* Adding beside it: no code left, generation unchanged. */
	ck_assert_int_eq(machine__mmap(m, 1, 0x20000, 0x1000, 0, RX, "/next", NULL, 0), 0);
	s1 = machine__snapshot(m, 1);
	ck_assert_uint_eq(map_snapshot__gen(s1), map_snapshot__gen(s0));
	/* Mapping into the middle splits /big in two, and the right part keeps its file offset. */
	ck_assert_int_eq(machine__mmap(m, 1, 0x14000, 0x2000, 0, RX, "/mid", NULL, 0), 0);
	s2 = machine__snapshot(m, 1);
	ck_assert_uint_ne(map_snapshot__gen(s2), map_snapshot__gen(s1));
	ck_assert_uint_eq(map_snapshot__nr(s2), 4);
	ck_assert_str_eq(name_at(s2, 0x13fff), "/big");
	ck_assert_str_eq(name_at(s2, 0x14000), "/mid");
	ck_assert_str_eq(name_at(s2, 0x15fff), "/mid");
	mp = map_snapshot__find(s2, 0x16000);
	ck_assert_str_eq(dso__name(mp->dso), "/big");
	ck_assert_uint_eq(mp->start, 0x16000);
	ck_assert_uint_eq(mp->end, 0x20000);
	ck_assert_uint_eq(mp->pgoff, 0x100000 + 0x6000);
	ck_assert_uint_eq(map_snapshot__find(s2, 0x10000)->end, 0x14000);
	/* Older snapshots are untouched. */
	ck_assert_uint_eq(map_snapshot__nr(s0), 1);
	ck_assert_str_eq(name_at(s0, 0x14000), "/big");
	ck_assert_ptr_null(map_snapshot__find(s0, 0x20000));
	ck_assert_str_eq(name_at(s1, 0x15000), "/big");

	/* munmap across two maps: both trimmed, generation moves. */
	ck_assert_int_eq(machine__munmap(m, 1, 0x15000, 0x2000), 0);
	map_snapshot__put(s0);
	s0 = machine__snapshot(m, 1);
	ck_assert_uint_ne(map_snapshot__gen(s0), map_snapshot__gen(s2));
	ck_assert_ptr_null(map_snapshot__find(s0, 0x15000));
	ck_assert_ptr_null(map_snapshot__find(s0, 0x16fff));
	ck_assert_str_eq(name_at(s0, 0x14fff), "/mid");
	mp = map_snapshot__find(s0, 0x17000);
	ck_assert_uint_eq(mp->pgoff, 0x100000 + 0x7000);
	/* Replacing a map exactly. */
	ck_assert_int_eq(machine__mmap(m, 1, 0x20000, 0x1000, 0, RX, "/other", NULL, 0), 0);
	map_snapshot__put(s1);
	s1 = machine__snapshot(m, 1);
	ck_assert_str_eq(name_at(s1, 0x20000), "/other");
	ck_assert_uint_eq(map_snapshot__nr(s1), map_snapshot__nr(s0));

	map_snapshot__put(s0);
	map_snapshot__put(s1);
	map_snapshot__put(s2);
	machine__free(m);
}
END_TEST

/* A FORK of a tid seen before makes another thread of that tid (perf's pid column names each
 * row after its own): each keeps its last name under its serial. */
START_TEST(test_thread_serials)
{
	struct machine *m = new_machine();
	uint32_t a, a2, b, c, none;

	ck_assert_int_eq(machine__comm(m, 10, 10, "sh", false), 0);
	ck_assert_int_eq(machine__fork(m, 20, 10, 20, 10), 0);
	ck_assert_int_eq(machine__comm(m, 20, 20, "aaaaaaaa", true), 0);
	ck_assert_str_eq(machine__comm_of(m, 20, 20, &a), "aaaaaaaa");
	ck_assert_uint_ne(a, 0);
	ck_assert_int_eq(machine__comm(m, 20, 20, "renamed", false), 0);
	ck_assert_str_eq(machine__comm_of(m, 20, 20, &a2), "renamed");
	ck_assert_uint_eq(a2, a);       /* a rename or an exec is the same thread */
	ck_assert_int_eq(machine__exit(m, 20, 20), 0);
	ck_assert_str_eq(machine__comm_of(m, 20, 20, &a2), "renamed");
	ck_assert_uint_eq(a2, a);       /* so is a sample after its EXIT */
	/* the pid reused */
	ck_assert_int_eq(machine__fork(m, 20, 10, 20, 10), 0);
	ck_assert_int_eq(machine__comm(m, 20, 20, "bb", true), 0);
	ck_assert_str_eq(machine__comm_of(m, 20, 20, &b), "bb");
	ck_assert_uint_ne(b, a);
	/* and again, as a thread of another process */
	ck_assert_int_eq(machine__fork(m, 10, 10, 20, 10), 0);
	ck_assert_str_eq(machine__comm_of(m, 10, 20, &c), "sh");
	ck_assert_uint_ne(c, b);
	ck_assert_uint_ne(c, a);
	ck_assert_int_eq(machine__comm(m, 10, 20, "worker", false), 0);
	ck_assert_str_eq(machine__thread_comm(m, 20, a), "renamed");
	ck_assert_str_eq(machine__thread_comm(m, 20, b), "bb");
	ck_assert_str_eq(machine__thread_comm(m, 20, c), "worker");
	ck_assert_ptr_null(machine__thread_comm(m, 21, c));
	ck_assert_ptr_null(machine__thread_comm(m, 20, c + 100));
	/* a tid no record named when it was sampled: its first thread, named later (perf made
	 * the thread at the sample, and the COMM renamed it) */
	ck_assert_ptr_null(machine__comm_of(m, 30, 31, &none));
	ck_assert_uint_eq(none, 0);
	ck_assert_ptr_null(machine__thread_comm(m, 31, 0));
	ck_assert_int_eq(machine__comm(m, 30, 31, "named-late", false), 0);
	ck_assert_str_eq(machine__thread_comm(m, 31, 0), "named-late");
	ck_assert_int_eq(machine__fork(m, 30, 30, 31, 30), 0);
	ck_assert_int_eq(machine__comm(m, 30, 31, "second", false), 0);
	ck_assert_str_eq(machine__thread_comm(m, 31, 0), "named-late");
	/* and for tid 20, whose first thread is a's */
	ck_assert_str_eq(machine__thread_comm(m, 20, 0), "renamed");
	machine__free(m);

	/* Threads retired in another order than they were made: tid 100 made first, tid 200
	 * reused first. */
	m = new_machine();
	ck_assert_int_eq(machine__comm(m, 1, 1, "init", false), 0);
	ck_assert_int_eq(machine__fork(m, 100, 1, 100, 1), 0);
	ck_assert_int_eq(machine__fork(m, 200, 1, 200, 1), 0);
	machine__comm_of(m, 100, 100, &a);
	machine__comm_of(m, 200, 200, &b);
	ck_assert_int_eq(machine__comm(m, 100, 100, "late100", false), 0);
	ck_assert_int_eq(machine__comm(m, 200, 200, "late200", false), 0);
	ck_assert_int_eq(machine__fork(m, 200, 1, 200, 1), 0);
	ck_assert_int_eq(machine__fork(m, 100, 1, 100, 1), 0);
	ck_assert_int_eq(machine__fork(m, 300, 1, 300, 1), 0);
	ck_assert_int_eq(machine__fork(m, 300, 1, 300, 1), 0);
	ck_assert_str_eq(machine__thread_comm(m, 100, a), "late100");
	ck_assert_str_eq(machine__thread_comm(m, 200, b), "late200");
	ck_assert_ptr_null(machine__thread_comm(m, 100, b));
	machine__free(m);
}
END_TEST

START_TEST(test_fork_thread_exec_exit)
{
	struct machine *m = new_machine();
	struct map_snapshot *parent, *child, *thread, *after;

	ck_assert_int_eq(machine__comm(m, 100, 100, "parent", false), 0);
	ck_assert_int_eq(machine__mmap(m, 100, 0x1000, 0x1000, 0, RX, "/bin/p", NULL, 0), 0);
	/* A thread shares the process's maps. */
	ck_assert_int_eq(machine__fork(m, 100, 100, 101, 100), 0);
	ck_assert_str_eq(machine__comm_of(m, 100, 101, NULL), "parent");
	/* A child process starts with a copy. */
	ck_assert_int_eq(machine__fork(m, 200, 100, 200, 100), 0);
	ck_assert_str_eq(machine__comm_of(m, 200, 200, NULL), "parent");
	parent = machine__snapshot(m, 100);
	child = machine__snapshot(m, 200);
	ck_assert_str_eq(name_at(child, 0x1000), "/bin/p");
	ck_assert_uint_ne(map_snapshot__gen(child), map_snapshot__gen(parent));
	ck_assert_int_eq(map_snapshot__pid(child), 200);

	/* Later changes stay in their process. */
	ck_assert_int_eq(machine__mmap(m, 100, 0x5000, 0x1000, 0, RX, "/lib/onlyparent", NULL, 0), 0);
	ck_assert_int_eq(machine__mmap(m, 200, 0x6000, 0x1000, 0, RX, "/lib/onlychild", NULL, 0), 0);
	thread = machine__snapshot(m, 100);
	after = machine__snapshot(m, 200);
	ck_assert_str_eq(name_at(thread, 0x5000), "/lib/onlyparent");
	ck_assert_ptr_null(map_snapshot__find(thread, 0x6000));
	ck_assert_ptr_null(map_snapshot__find(after, 0x5000));
	ck_assert_str_eq(name_at(after, 0x6000), "/lib/onlychild");
	ck_assert_ptr_null(map_snapshot__find(child, 0x6000));	/* taken before */
	map_snapshot__put(thread);
	map_snapshot__put(after);

	/* exec keeps the maps (as perf does: the new image's replace what they overlap),
	 * renames, moves the generation. */
	ck_assert_int_eq(machine__comm(m, 200, 200, "newprog", true), 0);
	after = machine__snapshot(m, 200);
	ck_assert_str_eq(name_at(after, 0x6000), "/lib/onlychild");
	ck_assert_uint_ne(map_snapshot__gen(after), map_snapshot__gen(child));
	map_snapshot__put(after);
	ck_assert_int_eq(machine__mmap(m, 200, 0x6000, 0x1000, 0, PROT_READ | PROT_EXEC,
				       "/bin/newprog", NULL, 0), 0);
	after = machine__snapshot(m, 200);
	ck_assert_str_eq(name_at(after, 0x6000), "/bin/newprog");
	ck_assert_str_eq(machine__comm_of(m, 200, 200, NULL), "newprog");
	ck_assert_str_eq(name_at(child, 0x1000), "/bin/p");	/* the old view lives on */
	map_snapshot__put(after);
	/* A plain COMM (prctl) renames without touching maps. */
	ck_assert_int_eq(machine__comm(m, 100, 101, "worker", false), 0);
	ck_assert_str_eq(machine__comm_of(m, 100, 101, NULL), "worker");
	ck_assert_str_eq(machine__comm_of(m, 100, 100, NULL), "parent");
	after = machine__snapshot(m, 100);
	ck_assert_uint_eq(map_snapshot__nr(after), 2);
	map_snapshot__put(after);

	/* Exit of every thread drops the process; the pid then starts empty. */
	ck_assert_int_eq(machine__exit(m, 100, 101), 0);
	after = machine__snapshot(m, 100);
	ck_assert_uint_eq(map_snapshot__nr(after), 2);	/* main thread still there */
	map_snapshot__put(after);
	ck_assert_int_eq(machine__exit(m, 100, 100), 0);
	/* An exited thread keeps its name, as in perf: the kernel samples a task after its
	 * EXIT record. A new thread with that tid takes the name it is given. */
	ck_assert_str_eq(machine__comm_of(m, 100, 100, NULL), "parent");
	ck_assert_str_eq(machine__comm_of(m, 100, 101, NULL), "worker");
	ck_assert_int_eq(machine__comm(m, 100, 101, "again", false), 0);
	ck_assert_str_eq(machine__comm_of(m, 100, 101, NULL), "again");
	/* No record names the idle task: perf calls it swapper; a COMM for it still wins. */
	ck_assert_str_eq(machine__comm_of(m, 0, 0, NULL), "swapper");
	ck_assert_ptr_null(machine__comm_of(m, 0, 7, NULL));
	ck_assert_int_eq(machine__comm(m, 0, 0, "idle", false), 0);
	ck_assert_str_eq(machine__comm_of(m, 0, 0, NULL), "idle");
	after = machine__snapshot(m, 100);
	ck_assert_uint_eq(map_snapshot__nr(after), 0);
	ck_assert_str_eq(name_at(parent, 0x1000), "/bin/p");
	map_snapshot__put(after);

	/* A process known only from its maps outlives unknown threads' exits. */
	ck_assert_int_eq(machine__mmap(m, 400, 0x1000, 0x1000, 0, RX, "/x", NULL, 0), 0);
	ck_assert_int_eq(machine__exit(m, 400, 401), 0);
	after = machine__snapshot(m, 400);
	ck_assert_uint_eq(map_snapshot__nr(after), 1);
	map_snapshot__put(after);

	/* pid reuse through FORK without EXIT: the new process is the new parent's copy. */
	ck_assert_int_eq(machine__fork(m, 200, 300, 200, 300), 0);
	after = machine__snapshot(m, 200);
	ck_assert_uint_eq(map_snapshot__nr(after), 0);
	map_snapshot__put(after);

	map_snapshot__put(parent);
	map_snapshot__put(child);
	machine__free(m);
}
END_TEST

START_TEST(test_kernel_maps)
{
	struct machine *m = new_machine();
	struct map_snapshot *s, *s2;
	const struct map *mp;

	s = machine__snapshot(m, 7);
	/* No kernel map yet: the kernel dso is still known. */
	ck_assert_ptr_null(map_snapshot__find(s, 0xffffffff81000000ULL));
	ck_assert_ptr_eq(map_snapshot__kernel_dso(s), machine__kernel_dso(m));
	ck_assert_int_eq(dso__kind(machine__kernel_dso(m)), DSO_KERNEL);
	ck_assert_int_eq(machine__mmap(m, -1, 0xffffffff81000000ULL, 0x1000000,
				       0xffffffff81000000ULL, RX, "[kernel.kallsyms]_text", NULL, 0),
			 0);
	/* Every process sees it, including ones created before. */
	s2 = machine__snapshot(m, 7);
	mp = map_snapshot__find(s2, 0xffffffff81000100ULL);
	ck_assert_ptr_nonnull(mp);
	ck_assert_str_eq(dso__name(mp->dso), "[kernel.kallsyms]");
	ck_assert_ptr_eq(mp->dso, machine__kernel_dso(m));
	ck_assert_uint_eq(map_snapshot__nr(s2), 0);	/* not among the process's own */
	ck_assert_ptr_null(map_snapshot__find(s, 0xffffffff81000100ULL));	/* s predates it */
	map_snapshot__put(s);
	s = machine__snapshot(m, 8);
	ck_assert_ptr_nonnull(map_snapshot__find(s, 0xffffffff81ffffffULL));
	ck_assert_ptr_null(map_snapshot__find(s, 0xffffffff82000000ULL));
	/* A kernel map that runs to the end of memory (len wraps) is clamped, not dropped. */
	ck_assert_int_eq(machine__mmap(m, -1, 0xffffffffa0000000ULL, -0xffffffffa0000000ULL + 0x10,
				       0, RX, "[kvm]", NULL, 0), 0);
	map_snapshot__put(s);
	s = machine__snapshot(m, 8);
	ck_assert_str_eq(name_at(s, 0xffffffffa0001000ULL), "[kvm]");
	ck_assert_int_eq(dso__kind(map_snapshot__find(s, 0xffffffffa0001000ULL)->dso), DSO_KERNEL);
	map_snapshot__put(s);
	map_snapshot__put(s2);
	machine__free(m);
}
END_TEST

/* ---- raw records ---- */

static size_t put_rec(uint8_t *buf, uint32_t type, uint16_t misc, const void *body, size_t len)
{
	struct perf_event_header h = { .type = type, .misc = misc };
	size_t size = (sizeof(h) + len + 7) & ~7UL;

	memset(buf, 0, size + 16);
	h.size = size + 16;	/* + a sample_id trailer, which must be ignored */
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), body, len);
	return h.size;
}

START_TEST(test_process_records)
{
	struct machine *m = new_machine();
	uint8_t buf[512], body[256];
	struct map_snapshot *s;
	const struct map *mp;
	uint32_t u32[4];
	uint64_t u64[3];

	/* COMM */
	u32[0] = 50;
	u32[1] = 50;
	memcpy(body, u32, 8);
	strcpy((char *)body + 8, "sh");
	put_rec(buf, PERF_RECORD_COMM, 0, body, 8 + 3);
	ck_assert_int_eq(machine__process(m, (void *)buf), 0);
	ck_assert_str_eq(machine__comm_of(m, 50, 50, NULL), "sh");

	/* MMAP2 with prot and a build id */
	memset(body, 0, sizeof(body));
	memcpy(body, u32, 8);
	u64[0] = 0x400000;
	u64[1] = 0x2000;
	u64[2] = 0x1000;
	memcpy(body + 8, u64, 24);
	body[32] = 20;	/* build id size */
	memset(body + 36, 0xab, 20);
	u32[2] = PROT_READ | PROT_EXEC;
	memcpy(body + 56, &u32[2], 4);
	strcpy((char *)body + 64, "/usr/bin/x");
	put_rec(buf, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID,
		body, 64 + 11);
	ck_assert_int_eq(machine__process(m, (void *)buf), 0);
	s = machine__snapshot(m, 50);
	mp = map_snapshot__find(s, 0x401000);
	ck_assert_ptr_nonnull(mp);
	ck_assert_uint_eq(mp->pgoff, 0x1000);
	ck_assert_uint_eq(mp->prot, PROT_READ | PROT_EXEC);
	ck_assert_str_eq(dso__name(mp->dso), "/usr/bin/x");
	map_snapshot__put(s);

	/* MMAP (old style) data map: not executable */
	memcpy(body, u32, 8);
	u64[0] = 0x600000;
	u64[1] = 0x1000;
	u64[2] = 0;
	memcpy(body + 8, u64, 24);
	strcpy((char *)body + 32, "/data");
	put_rec(buf, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA, body,
		32 + 6);
	ck_assert_int_eq(machine__process(m, (void *)buf), 0);
	s = machine__snapshot(m, 50);
	ck_assert_uint_eq(map_snapshot__find(s, 0x600000)->prot, PROT_READ);
	map_snapshot__put(s);

	/* FORK then COMM exec in the child, EXIT of the parent */
	u32[0] = 51; u32[1] = 50; u32[2] = 51; u32[3] = 50;
	memcpy(body, u32, 16);
	memset(body + 16, 0, 8);
	put_rec(buf, PERF_RECORD_FORK, 0, body, 24);
	ck_assert_int_eq(machine__process(m, (void *)buf), 0);
	s = machine__snapshot(m, 51);
	ck_assert_uint_eq(map_snapshot__nr(s), 2);
	map_snapshot__put(s);
	u32[0] = 51; u32[1] = 51;
	memcpy(body, u32, 8);
	strcpy((char *)body + 8, "ls");
	put_rec(buf, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, body, 8 + 3);
	ck_assert_int_eq(machine__process(m, (void *)buf), 0);
	s = machine__snapshot(m, 51);
	ck_assert_uint_eq(map_snapshot__nr(s), 2);	/* kept across the exec */
	ck_assert_str_eq(machine__comm_of(m, 51, 51, NULL), "ls");
	map_snapshot__put(s);
	u32[0] = 50; u32[1] = 1; u32[2] = 50; u32[3] = 1;
	memcpy(body, u32, 16);
	put_rec(buf, PERF_RECORD_EXIT, 0, body, 24);
	ck_assert_int_eq(machine__process(m, (void *)buf), 0);
	ck_assert_ptr_nonnull(machine__comm_of(m, 50, 50, NULL)); /* kept after EXIT, as perf does */

	/* Malformed: names without NUL inside the record, records too short. */
	memset(body, 'x', sizeof(body));
	memcpy(body, u32, 8);
	{
		struct perf_event_header h = { .type = PERF_RECORD_COMM, .size = 8 + 16 };

		memcpy(buf, &h, 8);
		memcpy(buf + 8, body, 16);
		ck_assert_int_eq(machine__process(m, (void *)buf), -EBADMSG);
		h.type = PERF_RECORD_MMAP2;
		memcpy(buf, &h, 8);
		ck_assert_int_eq(machine__process(m, (void *)buf), -EBADMSG);
		h.type = PERF_RECORD_FORK;
		h.size = 8 + 8;
		memcpy(buf, &h, 8);
		ck_assert_int_eq(machine__process(m, (void *)buf), -EBADMSG);
		h.type = PERF_RECORD_SAMPLE;	/* not ours: ignored */
		memcpy(buf, &h, 8);
		ck_assert_int_eq(machine__process(m, (void *)buf), 0);
	}
	machine__free(m);
}
END_TEST

/* ---- snapshots across threads ---- */

struct reader_arg {
	struct map_snapshot *snaps[64];
	int nr;
	int bad;
};

static void *reader(void *p)
{
	struct reader_arg *a = p;

	for (int rep = 0; rep < 200; rep++) {
		for (int i = 0; i < a->nr; i++) {
			/* Snapshot i was taken after i + 1 maps were added: exactly those. */
			struct map_snapshot *s = a->snaps[i];

			if (map_snapshot__nr(s) != (size_t)i + 1 ||
			    !map_snapshot__find(s, 0x10000 + i * 0x1000) ||
			    map_snapshot__find(s, 0x10000 + (i + 1) * 0x1000))
				a->bad++;
		}
	}
	for (int i = 0; i < a->nr; i++)
		map_snapshot__put(a->snaps[i]);
	return NULL;
}

START_TEST(test_snapshots_across_threads)
{
	struct machine *m = new_machine();
	struct reader_arg args[2] = { 0 };
	pthread_t th[2];
	int i;

	for (i = 0; i < 64; i++) {
		ck_assert_int_eq(machine__mmap(m, 5, 0x10000 + i * 0x1000, 0x1000, 0, RX, "/lib",
					       NULL, 0), 0);
		args[0].snaps[i] = machine__snapshot(m, 5);
		args[1].snaps[i] = map_snapshot__get(args[0].snaps[i]);
	}
	args[0].nr = args[1].nr = 64;
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, reader, &args[i]), 0);
	/* Meanwhile the main thread keeps applying records to the same process. */
	for (i = 0; i < 2000; i++) {
		ck_assert_int_eq(machine__mmap(m, 5, 0x10000 + (i % 64) * 0x1000, 0x800, 0, RX,
					       i & 1 ? "/x" : "/y", NULL, 0), 0);
		if (i % 100 == 0)
			ck_assert_int_eq(machine__comm(m, 5, 5, "exec", true), 0);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(args[i].bad, 0);
	}
	machine__free(m);
}
END_TEST

/* A snapshot edited in place (nothing else holds it) ends up exactly as a copy edited the same
 * way (a sample in flight holds the old one): random mmaps and munmaps over a small range, so
 * that they overlap, split and swallow each other, and the held snapshots never change. */
START_TEST(test_edit_in_place_as_copy)
{
	struct machine *inplace = new_machine(), *copied = new_machine();
	static const char *const names[] = { "/a", "/b", "/c", "//anon" };
	unsigned int seed = 1;

	for (int i = 0; i < 3000; i++) {
		uint64_t start = 0x10000 + (uint64_t)(rand_r(&seed) % 64) * 0x1000;
		uint64_t len = (uint64_t)(1 + rand_r(&seed) % 8) * 0x1000;
		uint64_t pgoff = (uint64_t)(rand_r(&seed) % 16) * 0x1000;
		const char *name = names[rand_r(&seed) % 4];
		bool unmap = rand_r(&seed) % 4 == 0;
		struct map_snapshot *held = machine__snapshot(copied, 7), *before, *a, *b;
		size_t nr_held = map_snapshot__nr(held);

		before = machine__snapshot(inplace, 7);
		map_snapshot__put(before);              /* in place: only the process holds it */
		if (unmap) {
			ck_assert_int_eq(machine__munmap(inplace, 7, start, len), 0);
			ck_assert_int_eq(machine__munmap(copied, 7, start, len), 0);
		} else {
			ck_assert_int_eq(machine__mmap(inplace, 7, start, len, pgoff, RX, name, NULL, 0), 0);
			ck_assert_int_eq(machine__mmap(copied, 7, start, len, pgoff, RX, name, NULL, 0), 0);
		}
		a = machine__snapshot(inplace, 7);
		b = machine__snapshot(copied, 7);
		ck_assert_ptr_ne(b, held);
		ck_assert_uint_eq(map_snapshot__nr(held), nr_held);
		ck_assert_uint_eq(map_snapshot__nr(a), map_snapshot__nr(b));
		for (size_t j = 0; j < map_snapshot__nr(a); j++) {
			const struct map *x = map_snapshot__map(a, j), *y = map_snapshot__map(b, j);

			ck_assert_uint_eq(x->start, y->start);
			ck_assert_uint_eq(x->end, y->end);
			ck_assert_uint_eq(x->pgoff, y->pgoff);
			ck_assert_str_eq(dso__name(x->dso), dso__name(y->dso));
			if (j)
				ck_assert_uint_le(map_snapshot__map(a, j - 1)->end, x->start);
		}
		map_snapshot__put(a);
		map_snapshot__put(b);
		map_snapshot__put(held);
	}
	machine__free(inplace);
	machine__free(copied);
}
END_TEST

struct announced { int n; char names[8][32]; };

static void on_new_file(void *ctx, struct dso *d)
{
	struct announced *a = ctx;

	ck_assert_int_lt(a->n, 8);
	snprintf(a->names[a->n++], 32, "%s", dso__name(d));
}

/* on_new_file: once per file, at its first executable map; never for data maps, anonymous or
 * special maps, deleted files, the kernel. */
START_TEST(test_new_file_hook)
{
	struct announced a = { 0 };
	struct machine_opts mo = { .on_new_file = on_new_file, .ctx = &a };
	struct machine *m = machine__new(&mo);

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(machine__mmap(m, 1, 0x1000, 0x1000, 0, PROT_READ, "/lib/d", NULL, 0), 0);
	ck_assert_int_eq(a.n, 0);
	ck_assert_int_eq(machine__mmap(m, 1, 0x2000, 0x1000, 0, RX, "/lib/a", NULL, 0), 0);
	ck_assert_int_eq(machine__mmap(m, 2, 0x2000, 0x1000, 0, RX, "/lib/a", NULL, 0), 0);
	ck_assert_int_eq(machine__mmap(m, 1, 0x3000, 0x1000, 0, RX, "//anon", NULL, 0), 0);
	ck_assert_int_eq(machine__mmap(m, 1, 0x4000, 0x1000, 0, RX, "[vdso]", NULL, 0), 0);
	ck_assert_int_eq(machine__mmap(m, 1, 0x5000, 0x1000, 0, RX, "/x (deleted)", NULL, 0), 0);
	ck_assert_int_eq(machine__mmap(m, -1, 0xffffffff81000000ULL, 0x1000000, 0, RX,
				       "[kernel.kallsyms]_text", NULL, 0), 0);
	ck_assert_int_eq(machine__mmap(m, 1, 0x6000, 0x1000, 0, RX, "/lib/d", NULL, 0), 0);
	ck_assert_int_eq(a.n, 2);
	ck_assert_str_eq(a.names[0], "/lib/a");
	ck_assert_str_eq(a.names[1], "/lib/d");
	machine__free(m);
}
END_TEST

Suite *machine_suite(void)
{
	Suite *s = suite_create("machine");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_mmap_find_and_order);
	tcase_add_test(tc, test_overlap_replaces_and_splits);
	tcase_add_test(tc, test_fork_thread_exec_exit);
	tcase_add_test(tc, test_thread_serials);
	tcase_add_test(tc, test_kernel_maps);
	tcase_add_test(tc, test_new_file_hook);
	suite_add_tcase(s, tc);
	tc = tcase_create("records");
	tcase_add_test(tc, test_process_records);
	suite_add_tcase(s, tc);
	tc = tcase_create("snapshots");
	tcase_add_test(tc, test_snapshots_across_threads);
	tcase_add_test(tc, test_edit_in_place_as_copy);
	suite_add_tcase(s, tc);
	return s;
}
