/* Tests for src/record/synthesize: records for this very process checked against what the dynamic
 * loader and stat() say about the executable, a COMM per thread of a multi-threaded child, the
 * kernel MMAP against kallsyms, vanished pids (really reaped ones, and a fake /proc whose maps
 * disappear mid-read), maps parsing on a fake /proc, every pid over a workqueue (plain and
 * ordered), error propagation from the output callback, and the bench's output shape. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <ctype.h>

#include "perf/abi.h"
#include "record/synthesize.h"
#include "lib/workqueue.h"

#define TEST_ID 0x1234abcdULL
#define TEST_CPU 3

/* Everything delivered, appended under a lock (out may run on several workers at once). */
struct collect {
	pthread_mutex_t lock;
	char *buf;
	size_t len, cap;
	unsigned int calls;
	unsigned int foreign_calls; /* calls not from the thread that started synthesis */
	pthread_t owner;
	int fail_with;              /* return this from out() when non-zero */
	unsigned int misaligned;
};

static int collect_out(void *ctx, const void *buf, size_t len)
{
	struct collect *c = ctx;

	pthread_mutex_lock(&c->lock);
	c->calls++;
	if (!pthread_equal(pthread_self(), c->owner))
		c->foreign_calls++;
	if (len % 8)
		c->misaligned++;
	if (c->len + len > c->cap) {
		c->cap = (c->len + len) * 2;
		c->buf = realloc(c->buf, c->cap);
	}
	memcpy(c->buf + c->len, buf, len);
	c->len += len;
	pthread_mutex_unlock(&c->lock);
	return c->fail_with;
}

static void collect_init(struct collect *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->owner = pthread_self();
}

static void collect_free(struct collect *c)
{
	free(c->buf);
	pthread_mutex_destroy(&c->lock);
}

static struct perf_event_attr test_attr(void)
{
	struct perf_event_attr a = { 0 };

	a.size = sizeof(a);
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	a.sample_id_all = 1;
	return a;
}

/* A record as the tests see it. */
struct rec {
	const struct perf_event_header *h;
	uint32_t pid, tid;
	/* COMM */
	const char *comm;
	/* MMAP / MMAP2 */
	uint64_t start, len, pgoff, ino;
	uint32_t maj, min, prot, flags;
	const char *name;
};

struct parsed {
	struct rec *recs;
	size_t nr;
};

/* Split the collected bytes into records, checking sizes, NUL-terminated strings and, for the
 * test attr, the trailer (pid/tid equal the body's, time 0, id/cpu/identifier as configured). */
static struct parsed parse_all(const struct collect *c, bool trailer)
{
	struct parsed p = { 0 };
	size_t off = 0, tsz = trailer ? 5 * 8 : 0;

	while (off < c->len) {
		const struct perf_event_header *h = (const void *)(c->buf + off);
		const uint32_t *u32 = (const void *)(h + 1);
		const uint64_t *t;
		struct rec r = { .h = h };
		size_t body;

		ck_assert_uint_ge(c->len - off, sizeof(*h));
		ck_assert_uint_ge(h->size, sizeof(*h) + 8 + tsz);
		ck_assert_uint_eq(h->size % 8, 0);
		ck_assert_uint_le(h->size, c->len - off);
		body = h->size - sizeof(*h) - tsz;
		r.pid = u32[0];
		r.tid = u32[1];
		switch (h->type) {
		case PERF_RECORD_COMM:
			r.comm = (const char *)(u32 + 2);
			ck_assert_ptr_nonnull(memchr(r.comm, 0, body - 8));
			ck_assert_uint_le(body - 8, 16);
			break;
		case PERF_RECORD_MMAP: {
			const uint64_t *u = (const void *)(u32 + 2);

			ck_assert_uint_gt(body, 32);
			r.start = u[0];
			r.len = u[1];
			r.pgoff = u[2];
			r.name = (const char *)(u + 3);
			ck_assert_ptr_nonnull(memchr(r.name, 0, body - 32));
			break;
		}
		case PERF_RECORD_MMAP2: {
			const uint64_t *u = (const void *)(u32 + 2);

			ck_assert_uint_gt(body, 64);
			r.start = u[0];
			r.len = u[1];
			r.pgoff = u[2];
			r.maj = ((const uint32_t *)(u + 3))[0];
			r.min = ((const uint32_t *)(u + 3))[1];
			r.ino = u[4];
			ck_assert_uint_eq(u[5], 0); /* ino_generation */
			r.prot = ((const uint32_t *)(u + 6))[0];
			r.flags = ((const uint32_t *)(u + 6))[1];
			r.name = (const char *)(u + 7);
			ck_assert_ptr_nonnull(memchr(r.name, 0, body - 64));
			/* Executable maps are plain user maps, the rest are data maps. */
			ck_assert_uint_eq(h->misc, PERF_RECORD_MISC_USER |
				(r.prot & PROT_EXEC ? 0 : PERF_RECORD_MISC_MMAP_DATA));
			break;
		}
		default:
			ck_abort_msg("unexpected record type %u", h->type);
		}
		if (trailer) {
			t = (const void *)((const char *)h + h->size - tsz);
			/* identifier? no: sample_type order is TID, TIME, ID, CPU, IDENTIFIER */
			if (h->type == PERF_RECORD_MMAP) {
				ck_assert_uint_eq(t[0], 0); /* the idle task, as perf writes it */
			} else {
				ck_assert_uint_eq((uint32_t)t[0], r.pid);
				ck_assert_uint_eq((uint32_t)(t[0] >> 32), r.tid);
			}
			ck_assert_uint_eq(t[1], 0);
			ck_assert_uint_eq(t[2], TEST_ID);
			ck_assert_uint_eq((uint32_t)t[3], TEST_CPU);
			ck_assert_uint_eq(t[4], TEST_ID);
		}
		p.recs = realloc(p.recs, (p.nr + 1) * sizeof(*p.recs));
		p.recs[p.nr++] = r;
		off += h->size;
	}
	ck_assert_uint_eq(off, c->len);
	ck_assert_uint_eq(c->misaligned, 0);
	return p;
}

/* The executable's text segment, as the loader mapped it. */
struct exe_seg {
	uint64_t start, end, pgoff;
	bool found;
};

static int find_text(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct exe_seg *s = ctx;
	uint64_t page = sysconf(_SC_PAGESIZE);

	/* The first object is the main program. */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t va;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		va = info->dlpi_addr + ph->p_vaddr;
		s->start = va & ~(page - 1);
		s->end = (va + ph->p_filesz + page - 1) & ~(page - 1);
		s->pgoff = ph->p_offset & ~(page - 1);
		s->found = true;
		break;
	}
	return 1;
}

START_TEST(test_self)
{
	struct perf_event_attr attr = test_attr();
	struct synth_opts o = { .attr = &attr, .id = TEST_ID, .cpu = TEST_CPU };
	struct synth_stats st;
	struct collect c;
	struct parsed p;
	struct exe_seg seg = { 0 };
	char exe[PATH_MAX], comm[17] = "";
	struct stat sb;
	ssize_t n;
	bool have_comm = false, have_text = false, have_data = false;

	collect_init(&c);
	ck_assert_int_eq(synthesize__pid(&o, getpid(), collect_out, &c, &st), 0);
	p = parse_all(&c, true);
	ck_assert_uint_eq(st.nr_processes, 1);
	ck_assert_uint_eq(st.nr_vanished, 0);
	ck_assert_uint_eq(st.nr_records, p.nr);
	ck_assert_uint_eq(st.nr_bytes, c.len);
	ck_assert_uint_eq(st.nr_threads + st.nr_mmaps, p.nr);

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	ck_assert_int_eq(stat(exe, &sb), 0);
	prctl(PR_GET_NAME, comm);
	dl_iterate_phdr(find_text, &seg);
	ck_assert(seg.found);

	for (size_t i = 0; i < p.nr; i++) {
		const struct rec *r = &p.recs[i];

		ck_assert_uint_eq(r->pid, getpid());
		if (r->h->type == PERF_RECORD_COMM) {
			if (r->tid == (uint32_t)getpid()) {
				ck_assert_str_eq(r->comm, comm);
				ck_assert_uint_eq(r->h->misc, 0);
				/* the name comes before the maps */
				ck_assert_uint_eq(i, 0);
				have_comm = true;
			}
			continue;
		}
		ck_assert_uint_eq(r->h->type, PERF_RECORD_MMAP2);
		ck_assert_uint_eq(r->tid, getpid());
		if (strcmp(r->name, exe))
			continue;
		ck_assert_uint_eq(r->ino, sb.st_ino);
		ck_assert_uint_eq(r->maj, major(sb.st_dev));
		ck_assert_uint_eq(r->min, minor(sb.st_dev));
		ck_assert_uint_eq(r->flags, MAP_PRIVATE);
		if (r->prot & PROT_EXEC) {
			ck_assert_uint_eq(r->prot, PROT_READ | PROT_EXEC);
			ck_assert_uint_eq(r->start, seg.start);
			ck_assert_uint_eq(r->len, seg.end - seg.start);
			ck_assert_uint_eq(r->pgoff, seg.pgoff);
			have_text = true;
		} else {
			have_data = true;
		}
	}
	ck_assert(have_comm);
	ck_assert(have_text);
	ck_assert(have_data);
	free(p.recs);
	collect_free(&c);
}
END_TEST

/* No attr: no trailer; exec_only: executable maps only. */
START_TEST(test_no_trailer_exec_only)
{
	struct synth_opts o = { .exec_only = true };
	struct collect c;
	struct parsed p;
	unsigned int nr_exec = 0;

	collect_init(&c);
	ck_assert_int_eq(synthesize__pid(&o, getpid(), collect_out, &c, NULL), 0);
	p = parse_all(&c, false);
	for (size_t i = 0; i < p.nr; i++) {
		const struct rec *r = &p.recs[i];

		if (r->h->type == PERF_RECORD_COMM) {
			ck_assert_uint_eq(r->h->size, 8 + 8 + ((strlen(r->comm) + 1 + 7) & ~7u));
			continue;
		}
		ck_assert(r->prot & PROT_EXEC);
		ck_assert_uint_eq(r->h->size, 8 + 64 + ((strlen(r->name) + 1 + 7) & ~7u));
		nr_exec++;
	}
	ck_assert_uint_ge(nr_exec, 2); /* at least the executable and libc */
	free(p.recs);
	collect_free(&c);
}
END_TEST

static void *idle_thread(void *arg)
{
	pthread_setname_np(pthread_self(), arg);
	pause();
	return NULL;
}

START_TEST(test_threads)
{
	struct perf_event_attr attr = test_attr();
	struct synth_opts o = { .attr = &attr, .id = TEST_ID, .cpu = TEST_CPU };
	static const char *names[] = { "thr-a", "thr-b", "thr-c" };
	int pfd[2];
	pid_t child;
	char ready;
	struct collect c;
	struct parsed p;
	struct synth_stats st;
	unsigned int seen = 0, comms = 0;
	uint32_t tids[8];

	ck_assert_int_eq(pipe(pfd), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		pthread_t th[3];

		prctl(PR_SET_NAME, "synth-child");
		for (int i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, idle_thread, (void *)names[i]);
		/* Names are set by each thread: ready once all three show theirs (the tcase's
		 * timeout bounds the wait, not a number of tries a busy machine may not honour). */
		for (;;) {
			char path[300], buf[32];
			int ok = 0;
			DIR *d;
			struct dirent *de;

			snprintf(path, sizeof(path), "/proc/self/task");
			d = opendir(path);
			while (d && (de = readdir(d))) {
				FILE *f;

				if (!isdigit((unsigned char)de->d_name[0]))
					continue;
				snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
				f = fopen(path, "r");
				if (f && fgets(buf, sizeof(buf), f) && !strncmp(buf, "thr-", 4))
					ok++;
				if (f)
					fclose(f);
			}
			if (d)
				closedir(d);
			if (ok == 3)
				break;
			usleep(5000);
		}
		write(pfd[1], "r", 1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ck_assert_int_eq(read(pfd[0], &ready, 1), 1);

	collect_init(&c);
	ck_assert_int_eq(synthesize__pid(&o, child, collect_out, &c, &st), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	p = parse_all(&c, true);
	ck_assert_uint_eq(st.nr_threads, 4);
	for (size_t i = 0; i < p.nr; i++) {
		const struct rec *r = &p.recs[i];

		ck_assert_uint_eq(r->pid, child);
		if (r->h->type != PERF_RECORD_COMM)
			continue;
		ck_assert_uint_lt(comms, 8);
		for (unsigned int k = 0; k < comms; k++)
			ck_assert_uint_ne(tids[k], r->tid);
		tids[comms++] = r->tid;
		if (r->tid == (uint32_t)child) {
			ck_assert_str_eq(r->comm, "synth-child");
			seen |= 8;
		}
		for (int k = 0; k < 3; k++)
			if (!strcmp(r->comm, names[k]))
				seen |= 1u << k;
	}
	ck_assert_uint_eq(comms, 4);
	ck_assert_uint_eq(seen, 15);
	free(p.recs);
	collect_free(&c);
	close(pfd[0]);
}
END_TEST

START_TEST(test_kernel_mmap)
{
	struct perf_event_attr attr = test_attr();
	struct synth_opts o = { .attr = &attr, .id = TEST_ID, .cpu = TEST_CPU };
	unsigned long long text = 0, etext = 0, addr;
	char type, name[256];
	struct collect c;
	struct parsed p;
	FILE *f = fopen("/proc/kallsyms", "r");
	int ret;

	ck_assert_ptr_nonnull(f);
	while (fscanf(f, "%llx %c %255s%*[^\n]", &addr, &type, name) == 3) {
		if (!strcmp(name, "_text"))
			text = addr;
		else if (!strcmp(name, "_etext"))
			etext = addr;
	}
	fclose(f);

	collect_init(&c);
	ret = synthesize__kernel_mmap(&o, collect_out, &c);
	if (text == 0) {
		/* kptr_restrict hides addresses from us */
		ck_assert_int_eq(ret, -EACCES);
		collect_free(&c);
		return;
	}
	ck_assert_int_eq(ret, 0);
	p = parse_all(&c, true);
	ck_assert_uint_eq(p.nr, 1);
	ck_assert_uint_eq(p.recs[0].h->type, PERF_RECORD_MMAP);
	ck_assert_uint_eq(p.recs[0].h->misc, PERF_RECORD_MISC_KERNEL);
	ck_assert_uint_eq(p.recs[0].pid, (uint32_t)-1);
	ck_assert_uint_eq(p.recs[0].tid, 0);
	ck_assert_str_eq(p.recs[0].name, "[kernel.kallsyms]_text");
	ck_assert_uint_eq(p.recs[0].start, text);
	ck_assert_uint_eq(p.recs[0].pgoff, text);
	ck_assert_uint_gt(etext, text);
	ck_assert_uint_eq(p.recs[0].len, etext - text);
	free(p.recs);
	collect_free(&c);

	o.proc_root = "/nonexistent";
	ck_assert_int_eq(synthesize__kernel_mmap(&o, collect_out, &c), -ENOENT);
}
END_TEST

START_TEST(test_vanished)
{
	struct synth_opts o = { 0 };
	struct synth_stats st;
	struct collect c;
	pid_t gone = fork(), list[3];

	ck_assert_int_ge(gone, 0);
	if (gone == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(gone, NULL, 0), gone);

	collect_init(&c);
	ck_assert_int_eq(synthesize__pid(&o, gone, collect_out, &c, &st), -ESRCH);
	ck_assert_uint_eq(st.nr_vanished, 1);
	ck_assert_uint_eq(st.nr_records, 0);
	ck_assert_uint_eq(c.len, 0);

	list[0] = getpid();
	list[1] = gone;
	list[2] = getppid();
	ck_assert_int_eq(synthesize__pids(&o, list, 3, collect_out, &c, &st), 0);
	ck_assert_uint_eq(st.nr_vanished, 1);
	ck_assert_uint_eq(st.nr_processes, 2);
	ck_assert_uint_gt(c.len, 0);
	collect_free(&c);

	ck_assert_int_eq(synthesize__pid(&o, 0, collect_out, &c, &st), -EINVAL);
}
END_TEST

/* A fake /proc in a temporary directory. */
static char fake_root[64];

static void write_file(const char *rel, const char *text)
{
	char path[PATH_MAX], cmd[PATH_MAX + 16];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fake_root, rel);
	snprintf(cmd, sizeof(cmd), "%s", path);
	*strrchr(cmd, '/') = '\0';
	for (char *s = cmd + strlen(fake_root) + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			mkdir(cmd, 0755);
			*s = '/';
		}
	}
	mkdir(cmd, 0755);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void make_fake_proc(void)
{
	strcpy(fake_root, "/tmp/synth-proc-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(fake_root));
	/* 100: a normal process with odd map names */
	write_file("100/task/100/comm", "fakeproc\n");
	write_file("100/task/101/comm", "a-very-long-thread-name\n");
	write_file("100/maps",
		   "00400000-00452000 r-xp 00001000 08:02 173521      /usr/bin/with space\n"
		   "7f0000000000-7f0000200000 rw-s 00000000 00:0f 4242 /anon_hugepage (deleted)\n"
		   "7f0000200000-7f0000201000 rw-p 00000000 00:00 0 \n"
		   "7f0000201000-7f0000202000 ---p 00000000 00:00 0\n"
		   "7f0000202000-7f0000203000 r--p 0000a000 fd:01 99 /lib/gone.so (deleted)\n"
		   "garbage line\n"
		   "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]");
	/* 200: a kernel thread (empty maps) */
	write_file("200/task/200/comm", "kworker/0:1\n");
	write_file("200/maps", "");
	/* 300: its maps vanished mid-read (task readable, maps gone) */
	write_file("300/task/300/comm", "dying\n");
	/* 400: nothing at all but the directory: gone before task could be listed */
	write_file("400/stat", "");
}

static void remove_fake_proc(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fake_root);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_fake_proc)
{
	struct synth_opts o = { .proc_root = NULL, .ordered = true };
	struct synth_stats st;
	struct collect c;
	struct parsed p;
	struct wq_opts wo = { .nr_workers = 2 };

	make_fake_proc();
	o.proc_root = fake_root;
	o.wq = wq__new(&wo);
	ck_assert_ptr_nonnull(o.wq);
	collect_init(&c);
	ck_assert_int_eq(synthesize__all(&o, collect_out, &c, &st), 0);
	wq__free(o.wq);
	remove_fake_proc();
	p = parse_all(&c, false);

	ck_assert_uint_eq(st.nr_processes, 2);
	ck_assert_uint_eq(st.nr_vanished, 2);
	ck_assert_uint_eq(st.nr_threads, 3);
	ck_assert_uint_eq(st.nr_mmaps, 6);
	ck_assert_uint_eq(p.nr, 9);
	/* Ordered: pid 100 first, its main thread first; then 200. Nothing from 300. */
	ck_assert_uint_eq(p.recs[0].h->type, PERF_RECORD_COMM);
	ck_assert_uint_eq(p.recs[0].tid, 100);
	ck_assert_str_eq(p.recs[0].comm, "fakeproc");
	ck_assert_uint_eq(p.recs[1].tid, 101);
	ck_assert_str_eq(p.recs[1].comm, "a-very-long-thr"); /* 15 bytes + NUL */

	ck_assert_str_eq(p.recs[2].name, "/usr/bin/with space");
	ck_assert_uint_eq(p.recs[2].start, 0x400000);
	ck_assert_uint_eq(p.recs[2].len, 0x52000);
	ck_assert_uint_eq(p.recs[2].pgoff, 0x1000);
	ck_assert_uint_eq(p.recs[2].maj, 8);
	ck_assert_uint_eq(p.recs[2].min, 2);
	ck_assert_uint_eq(p.recs[2].ino, 173521);
	ck_assert_uint_eq(p.recs[2].prot, PROT_READ | PROT_EXEC);
	ck_assert_uint_eq(p.recs[2].flags, MAP_PRIVATE);

	ck_assert_str_eq(p.recs[3].name, "//anon");
	ck_assert_uint_eq(p.recs[3].flags, MAP_SHARED | MAP_HUGETLB);
	ck_assert_uint_eq(p.recs[3].prot, PROT_READ | PROT_WRITE);
	ck_assert_uint_eq(p.recs[3].maj, 0);
	ck_assert_uint_eq(p.recs[3].min, 0xf);

	ck_assert_str_eq(p.recs[4].name, "//anon");
	ck_assert_str_eq(p.recs[5].name, "//anon");
	ck_assert_uint_eq(p.recs[5].prot, 0);
	ck_assert_str_eq(p.recs[6].name, "/lib/gone.so (deleted)");
	ck_assert_uint_eq(p.recs[6].maj, 0xfd);
	ck_assert_uint_eq(p.recs[6].pgoff, 0xa000);
	ck_assert_str_eq(p.recs[7].name, "[stack]");
	ck_assert_uint_eq(p.recs[7].len, 0x21000);

	ck_assert_uint_eq(p.recs[8].h->type, PERF_RECORD_COMM);
	ck_assert_uint_eq(p.recs[8].pid, 200);
	ck_assert_str_eq(p.recs[8].comm, "kworker/0:1");
	/* ordered: out() only from the calling thread */
	ck_assert_uint_eq(c.foreign_calls, 0);
	free(p.recs);
	collect_free(&c);
}
END_TEST

/* The numeric entries of /proc, as a sorted array. */
static size_t proc_pids(pid_t **ret)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t nr = 0;
	pid_t *pids = NULL;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pids = realloc(pids, (nr + 1) * sizeof(*pids));
		pids[nr++] = atoi(de->d_name);
	}
	closedir(d);
	*ret = pids;
	return nr;
}

static bool has_pid(const pid_t *pids, size_t nr, pid_t pid)
{
	for (size_t i = 0; i < nr; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

static void check_all(bool ordered)
{
	struct perf_event_attr attr = test_attr();
	struct wq_opts wo = { .nr_workers = 2 };
	struct synth_opts o = { .attr = &attr, .id = TEST_ID, .cpu = TEST_CPU, .ordered = ordered,
				.batch_size = 4096 };
	struct synth_stats st;
	struct collect c;
	struct parsed p;
	pid_t *before, *after, *comm_pids = NULL;
	size_t nr_before, nr_after, nr_comm = 0, both = 0;
	pid_t last = 0;

	o.wq = wq__new(&wo);
	ck_assert_ptr_nonnull(o.wq);
	collect_init(&c);
	nr_before = proc_pids(&before);
	ck_assert_int_eq(synthesize__all(&o, collect_out, &c, &st), 0);
	nr_after = proc_pids(&after);
	wq__free(o.wq);
	p = parse_all(&c, true);
	ck_assert_uint_eq(st.nr_records, p.nr);
	ck_assert_uint_eq(st.nr_bytes, c.len);
	ck_assert_uint_gt(c.calls, 1);

	for (size_t i = 0; i < p.nr; i++) {
		if (p.recs[i].h->type != PERF_RECORD_COMM || p.recs[i].pid != p.recs[i].tid)
			continue;
		comm_pids = realloc(comm_pids, (nr_comm + 1) * sizeof(*comm_pids));
		comm_pids[nr_comm++] = p.recs[i].pid;
		if (ordered) {
			ck_assert_int_gt(p.recs[i].pid, last);
			last = p.recs[i].pid;
		}
	}
	ck_assert_uint_eq(nr_comm, st.nr_processes);
	/* Every process alive throughout was synthesized. */
	for (size_t i = 0; i < nr_before; i++) {
		if (!has_pid(after, nr_after, before[i]))
			continue;
		both++;
		ck_assert_msg(has_pid(comm_pids, nr_comm, before[i]), "pid %d missing", before[i]);
	}
	ck_assert_uint_ge(st.nr_processes, both);
	ck_assert_uint_ge(st.nr_processes + st.nr_vanished, both);
	ck_assert(has_pid(comm_pids, nr_comm, getpid()));
	if (ordered)
		ck_assert_uint_eq(c.foreign_calls, 0);
	free(before);
	free(after);
	free(comm_pids);
	free(p.recs);
	collect_free(&c);
}

START_TEST(test_all_pids)
{
	check_all(false);
}
END_TEST

START_TEST(test_all_pids_ordered)
{
	check_all(true);
}
END_TEST

START_TEST(test_out_error)
{
	struct wq_opts wo = { .nr_workers = 2 };
	struct synth_opts o = { 0 };
	struct collect c;

	o.wq = wq__new(&wo);
	ck_assert_ptr_nonnull(o.wq);
	collect_init(&c);
	c.fail_with = -EIO;
	ck_assert_int_eq(synthesize__all(&o, collect_out, &c, NULL), -EIO);
	ck_assert_int_eq(synthesize__pid(&o, getpid(), collect_out, &c, NULL), -EIO);
	ck_assert_int_eq(synthesize__kernel_mmap(&o, collect_out, &c), -EIO);
	o.ordered = true;
	ck_assert_int_eq(synthesize__all(&o, collect_out, &c, NULL), -EIO);
	ck_assert_int_eq(synthesize__all(&o, NULL, &c, NULL), -EINVAL);
	wq__free(o.wq);
	collect_free(&c);
}
END_TEST

START_TEST(test_bench)
{
	struct synth_bench_opts bo = { .single_iterations = 3, .multi_iterations = 1,
				       .max_threads = 2 };
	char *text = NULL, *line = NULL;
	size_t size = 0, cap = 0;
	FILE *f = open_memstream(&text, &size);
	unsigned int per_event = 0, threads_lines = 0, took = 0;

	ck_assert_int_eq(synthesize__bench(f, false, &bo), 0);
	ck_assert_int_eq(synthesize__bench(f, true, &bo), 0);
	fclose(f);
	f = fmemopen(text, size, "r");
	while (getline(&line, &cap, f) > 0) {
		double a, b;
		unsigned int n;

		if (sscanf(line, " Average time per event %lf usec", &a) == 1) {
			ck_assert(a > 0);
			per_event++;
		} else if (sscanf(line, " Average synthesis took: %lf usec (+- %lf usec)", &a,
				  &b) == 2 ||
			   sscanf(line, " Average data synthesis took: %lf usec (+- %lf usec)", &a,
				  &b) == 2) {
			ck_assert(a > 0);
			took++;
		} else if (sscanf(line, " Number of synthesis threads: %u", &n) == 1) {
			ck_assert_uint_eq(n, threads_lines + 1);
			threads_lines++;
		}
	}
	fclose(f);
	free(line);
	/* single: synthesis + data synthesis; threads: 1 and 2 */
	ck_assert_uint_eq(per_event, 4);
	ck_assert_uint_eq(took, 4);
	ck_assert_uint_eq(threads_lines, 2);
	free(text);

	bo.min_threads = 3;
	f = fopen("/dev/null", "w");
	ck_assert_int_eq(synthesize__bench(f, true, &bo), -EINVAL);
	fclose(f);
}
END_TEST

Suite *synthesize_suite(void)
{
	Suite *s = suite_create("synthesize");
	TCase *tc = tcase_create("process");

	tcase_add_test(tc, test_self);
	tcase_add_test(tc, test_no_trailer_exec_only);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_kernel_mmap);
	tcase_add_test(tc, test_vanished);
	tcase_add_test(tc, test_fake_proc);
	suite_add_tcase(s, tc);

	tc = tcase_create("system");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_all_pids);
	tcase_add_test(tc, test_all_pids_ordered);
	tcase_add_test(tc, test_out_error);
	tcase_add_test(tc, test_bench);
	suite_add_tcase(s, tc);
	return s;
}
