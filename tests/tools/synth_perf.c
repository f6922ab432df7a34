/* synth_perf: builds a perf.data with the precord writer from records it synthesizes itself, so
 * that perf 6.1 can judge the writer alone. A fake process (pid 4242, comm "synthdemo") maps
 * this very executable (its real r-x mapping, so perf finds the symbols on disk) and takes
 * samples whose ips lie inside hot_function (2 of 3) and cold_function (1 of 3). Two threads
 * append like the recorder's readers, in passes reported to the writer's round bookkeeping;
 * with -z each pass is one zstd frame in one PERF_RECORD_COMPRESSED.
 *
 * usage: synth_perf [-z LEVEL] [-n SAMPLES_PER_THREAD] OUT */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "perf/abi.h"
#include "perf/writer.h"

#define PID 4242
#define COMM "synthdemo"
#define PERIOD 250000
#define PASS 10 /* samples per pass */
#define NTHREADS 2

/* The functions the samples land in; big enough that +0..15 stays inside them. */
__attribute__((noinline)) unsigned long hot_function(unsigned long n)
{
	volatile unsigned long acc = 0;

	for (unsigned long i = 0; i < n; i++)
		acc += i * i ^ (acc >> 3);
	return acc;
}

__attribute__((noinline)) unsigned long cold_function(unsigned long n)
{
	volatile unsigned long acc = 1;

	for (unsigned long i = 0; i < n; i++)
		acc *= i | 1;
	return acc;
}

static struct perf_writer *w;
static int comp_level;
static int per_thread = 150;
static pthread_barrier_t pass_barrier;

struct map {
	uint64_t start, end, pgoff, ino;
	unsigned int maj, min;
	char path[4096];
};

/* The mapping of this executable that holds hot_function. */
static int find_map(struct map *m)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4200];
	uintptr_t ip = (uintptr_t)hot_function;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char perms[8];
		int n = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &m->start, &m->end, perms, &m->pgoff, &m->maj, &m->min, &m->ino, &n) < 7)
			continue;
		if (ip < m->start || ip >= m->end)
			continue;
		snprintf(m->path, sizeof(m->path), "%s", line + n);
		m->path[strcspn(m->path, "\n")] = '\0';
		fclose(f);
		return 0;
	}
	fclose(f);
	return -ENOENT;
}

/* The kernel text range from /proc/kallsyms; 0 when addresses are hidden. */
static uint64_t kernel_text(uint64_t *ret_end)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], name[256], type;
	uint64_t addr, start = 0, end = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && !(start && end)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3)
			continue;
		if (strcmp(name, "_text") == 0)
			start = addr;
		else if (strcmp(name, "_etext") == 0)
			end = addr;
	}
	fclose(f);
	*ret_end = end;
	return start && end > start ? start : 0;
}

/* sample_id_all trailer for IP|TID|TIME|CPU|PERIOD: pid/tid, time, cpu/res. */
static size_t put_trailer_pid(uint8_t *p, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	uint32_t pt[2] = { pid, tid }, cr[2] = { cpu, 0 };

	memcpy(p, pt, 8);
	memcpy(p + 8, &time, 8);
	memcpy(p + 16, cr, 8);
	return 24;
}

static size_t put_trailer(uint8_t *p, uint64_t time, uint32_t cpu)
{
	uint32_t pt[2] = { PID, PID }, cr[2] = { cpu, 0 };

	memcpy(p, pt, 8);
	memcpy(p + 8, &time, 8);
	memcpy(p + 16, cr, 8);
	return 24;
}

static size_t comm_record(uint8_t *buf)
{
	struct perf_event_header h = { PERF_RECORD_COMM, 0, 0 };
	uint32_t pt[2] = { PID, PID };
	char comm[16] = COMM; /* 10 bytes with NUL, padded to 16 */
	size_t n = 8;

	memcpy(buf + n, pt, 8);
	n += 8;
	memcpy(buf + n, comm, sizeof(comm));
	n += sizeof(comm);
	n += put_trailer(buf + n, 0, 0);
	h.size = (uint16_t)n;
	memcpy(buf, &h, 8);
	return n;
}

static size_t mmap2_record(uint8_t *buf, const struct map *m)
{
	struct perf_event_header h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 0 };
	uint32_t pt[2] = { PID, PID }, mm[2] = { m->maj, m->min };
	uint32_t pf[2] = { PROT_READ | PROT_EXEC, MAP_PRIVATE };
	uint64_t v[3] = { m->start, m->end - m->start, m->pgoff }, ig[2] = { m->ino, 0 };
	size_t n = 8, plen = strlen(m->path) + 1;

	memcpy(buf + n, pt, 8), n += 8;
	memcpy(buf + n, v, 24), n += 24;
	memcpy(buf + n, mm, 8), n += 8;
	memcpy(buf + n, ig, 16), n += 16;
	memcpy(buf + n, pf, 8), n += 8;
	memset(buf + n, 0, (plen + 7) / 8 * 8);
	memcpy(buf + n, m->path, plen);
	n += (plen + 7) / 8 * 8;
	n += put_trailer(buf + n, 0, 0);
	h.size = (uint16_t)n;
	memcpy(buf, &h, 8);
	return n;
}

/* What a recorder synthesizes for the kernel: without it perf warns about kernel maps. */
static size_t kernel_mmap_record(uint8_t *buf, uint64_t start, uint64_t end)
{
	struct perf_event_header h = { PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, 0 };
	uint32_t pt[2] = { (uint32_t)-1, 0 };
	uint64_t v[3] = { start, end - start, start };
	char name[24] = "[kernel.kallsyms]_text"; /* 23 bytes with NUL, padded to 24 */
	size_t n = 8;

	memcpy(buf + n, pt, 8), n += 8;
	memcpy(buf + n, v, 24), n += 24;
	memcpy(buf + n, name, sizeof(name)), n += sizeof(name);
	n += put_trailer_pid(buf + n, (uint32_t)-1, 0, 0, 0);
	h.size = (uint16_t)n;
	memcpy(buf, &h, 8);
	return n;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct sample {
	struct perf_event_header h;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t period;
};

static void *reader(void *arg)
{
	unsigned int slot = (unsigned int)(uintptr_t)arg;
	struct sample batch[PASS];
	ZSTD_CCtx *z = comp_level ? ZSTD_createCCtx() : NULL;
	uint8_t zbuf[8 + ZSTD_COMPRESSBOUND(sizeof(batch))];
	uint64_t first = UINT64_MAX, last = 0;
	int i = 0, err = 0;

	for (int pass = 0; pass < (per_thread + PASS - 1) / PASS; pass++) {
		uint64_t started;
		int n = 0;

		/* the readers' passes in lockstep, so that each pass of both ends a round: how many
		 * FINISHED_ROUNDs there are must not depend on how the scheduler interleaves the two
		 * (beside a CPU hog one ran all its passes before the other began: one round) */
		pthread_barrier_wait(&pass_barrier);
		if (err)
			continue;
		started = perf_writer__round(w);

		for (; n < PASS && i < per_thread; n++, i++) {
			bool hot = i % 3 != 2;
			uintptr_t fn = hot ? (uintptr_t)hot_function : (uintptr_t)cold_function;

			batch[n] = (struct sample){
				.h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(batch[0]) },
				.ip = fn + (uint64_t)(i % 16),
				.pid = PID, .tid = PID,
				.time = now_ns(),
				.cpu = slot,
				.period = PERIOD,
			};
			if (batch[n].time < first)
				first = batch[n].time;
			last = batch[n].time;
		}
		struct iovec iov;
		if (z) {
			size_t len = ZSTD_compressCCtx(z, zbuf + 8, sizeof(zbuf) - 8, batch,
						       n * sizeof(batch[0]), comp_level);
			struct perf_event_header h = { PERF_RECORD_COMPRESSED, 0, 0 };

			if (ZSTD_isError(len)) {
				err = -EIO;
				break;
			}
			h.size = (uint16_t)(8 + len);
			memcpy(zbuf, &h, 8);
			iov = (struct iovec){ zbuf, 8 + len };
			perf_writer__note_compression(w, n * sizeof(batch[0]), iov.iov_len);
		} else {
			iov = (struct iovec){ batch, n * sizeof(batch[0]) };
		}
		err = perf_writer__append(w, &iov, 1);
		if (!err)
			err = perf_writer__pass_done(w, slot, started);
	}
	if (first <= last)
		perf_writer__note_time(w, first, last);
	ZSTD_freeCCtx(z);
	return (void *)(intptr_t)err;
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr = { 0 };
	const uint64_t ids[] = { 101, 102 };
	struct perf_writer_event ev = { "cpu-clock", &attr, ids, 2 };
	struct perf_writer_opts opts = { .events = &ev, .nr_events = 1, .argc = argc, .argv = argv };
	struct map m;
	uint8_t buf[8192];
	pthread_t t[NTHREADS];
	int opt, r;

	while ((opt = getopt(argc, argv, "z:n:")) != -1) {
		if (opt == 'z')
			comp_level = atoi(optarg);
		else if (opt == 'n')
			per_thread = atoi(optarg);
		else
			return 2;
	}
	if (optind != argc - 1 || per_thread <= 0) {
		fprintf(stderr, "usage: synth_perf [-z LEVEL] [-n SAMPLES_PER_THREAD] OUT\n");
		return 2;
	}
	r = find_map(&m);
	if (r < 0) {
		fprintf(stderr, "synth_perf: cannot find my own text mapping: %s\n", strerror(-r));
		return 1;
	}

	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = PERIOD;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			   PERF_SAMPLE_PERIOD;
	attr.disabled = 1;
	attr.mmap = attr.comm = attr.task = attr.mmap2 = attr.comm_exec = 1;
	attr.sample_id_all = 1;
	uint64_t ktext_end, ktext = kernel_text(&ktext_end);
	if (!ktext)
		attr.exclude_kernel = 1; /* no kernel map to give: say there are no kernel samples */
	opts.comp_level = comp_level;

	w = perf_writer__open(argv[optind], &opts);
	if (!w) {
		fprintf(stderr, "synth_perf: cannot create %s: %m\n", argv[optind]);
		return 1;
	}
	/* Time-0 records first, as a recorder synthesizes them before the target runs. */
	size_t n = ktext ? kernel_mmap_record(buf, ktext, ktext_end) : 0;
	n += comm_record(buf + n);
	n += mmap2_record(buf + n, &m);
	struct iovec iov = { buf, n };
	r = perf_writer__append(w, &iov, 1);
	if (!r)
		r = perf_writer__add_dso(w, m.path, false);
	if (!r && ktext)
		r = perf_writer__add_dso(w, "[kernel.kallsyms]", true);
	if (!r)
		r = perf_writer__set_round_slots(w, NTHREADS);
	if (!r)
		r = perf_writer__sync(w);
	if (!r)
		r = -pthread_barrier_init(&pass_barrier, NULL, NTHREADS);
	for (uintptr_t i = 0; !r && i < NTHREADS; i++)
		r = -pthread_create(&t[i], NULL, reader, (void *)i);
	for (int i = 0; !r && i < NTHREADS; i++) {
		void *ret;
		pthread_join(t[i], &ret);
		if ((intptr_t)ret)
			r = (int)(intptr_t)ret;
	}
	if (!r)
		r = perf_writer__finalize(w);
	perf_writer__free(w);
	if (r < 0) {
		fprintf(stderr, "synth_perf: writing %s failed: %s\n", argv[optind], strerror(-r));
		return 1;
	}
	/* Keep the sampled functions in the binary and out of reach of the optimizer. */
	if (argc > 100)
		printf("%lu %lu\n", hot_function(argc), cold_function(argc));
	return 0;
}
