/* Tracepoints from tracefs. The tracing-data blob is laid out as perf 6.1's trace-event-info.c
 * writes it (checked byte for byte against perf record -e sched:sched_switch): magic
 * "\027\010\104tracing", "0.6", endianness, sizeof(long), page size, the two header files, no
 * ftrace formats, the event formats by subsystem, no kallsyms, printk_formats, no cmdlines.
 * tracefs files report size 0, so each is read to its end before its size is written. */
#include "record/tracefs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "perf/features.h"

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

/* tracefs files are small (a format is ~2 KiB, printk_formats tens of KiB); a bound keeps a
 * broken kernel file from growing the blob without end. */
#define TRACEFS_FILE_MAX (16u << 20)

static pthread_once_t dir_once = PTHREAD_ONCE_INIT;
static const char *dir_found;
static int dir_err;

static int is_tracefs(const char *path)
{
	struct statfs sf;
	char events[128];

	snprintf(events, sizeof(events), "%s/events", path);
	return statfs(path, &sf) == 0 && sf.f_type == TRACEFS_MAGIC && access(events, R_OK) == 0;
}

static void find_dir(void)
{
	static const char *const places[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

	for (size_t i = 0; i < ARRAY_SIZE(places); i++)
		if (is_tracefs(places[i])) {
			dir_found = places[i];
			return;
		}
	/* mounted nowhere yet: mount it where the kernel provides the mount point, as perf does */
	if (mount("nodev", places[0], "tracefs", 0, NULL) == 0 && is_tracefs(places[0])) {
		dir_found = places[0];
		return;
	}
	dir_err = errno == EBUSY || !errno ? ENOENT : errno;
}

const char *tracefs__dir(void)
{
	pthread_once(&dir_once, find_dir);
	if (!dir_found)
		errno = dir_err;
	return dir_found;
}

static int name_ok(const char *s, size_t len)
{
	if (!len || len > 63)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z')))
			return 0;
	return 1;
}

int tracefs__split(const char *spec, char sys[64], char name[64])
{
	const char *colon = spec ? strchr(spec, ':') : NULL;

	if (!colon || !name_ok(spec, (size_t)(colon - spec)) || !name_ok(colon + 1, strlen(colon + 1)))
		return -EINVAL;
	memcpy(sys, spec, (size_t)(colon - spec));
	sys[colon - spec] = 0;
	strcpy(name, colon + 1);
	return 0;
}

/* Read a whole tracefs file into a malloc'd buffer. Returns 0 or -errno. */
static int slurp(const char *path, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = fileio__read_all(fd, &buf, &cap, TRACEFS_FILE_MAX);
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	*ret = buf;
	*ret_len = (size_t)n;
	return 0;
}

int tracefs__event_id(const char *sys, const char *name, uint64_t *ret_id)
{
	_cleanup_free_ char *text = NULL;
	const char *dir;
	char path[512], *end;
	size_t len;
	unsigned long long id;
	int r;

	if (!name_ok(sys, strlen(sys)) || !name_ok(name, strlen(name)))
		return -EINVAL;
	dir = tracefs__dir();
	if (!dir)
		return -errno;
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, sys, name);
	r = slurp(path, &text, &len);
	if (r < 0)
		return r == -ENOTDIR ? -ENOENT : r;
	errno = 0;
	id = strtoull(text, &end, 10);
	if (errno || end == text)
		return -EINVAL;
	*ret_id = id;
	return 0;
}

bool tracefs__has_system(const char *sys)
{
	const char *dir;
	char path[512];
	struct stat st;

	if (!name_ok(sys, strlen(sys)))
		return false;
	dir = tracefs__dir();
	if (!dir)
		return false;
	snprintf(path, sizeof(path), "%s/events/%s", dir, sys);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The section being built: perf/features' buffer, and the first error of reading a file. */
struct blob {
	struct fbuf f;
	int err;
};

static void put(struct blob *b, const void *src, size_t n)
{
	fbuf__put(&b->f, src, n);
}

static void put_u32(struct blob *b, uint32_t v)
{
	fbuf__put_u32(&b->f, v);
}

static void put_u64(struct blob *b, uint64_t v)
{
	fbuf__put_u64(&b->f, v);
}

/* A file's contents preceded by its size, u64 or (size4) u32 as perf writes each section. */
static void put_file(struct blob *b, const char *path, int size4)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r;

	if (b->err)
		return;
	r = slurp(path, &text, &len);
	if (r < 0) {
		b->err = r;
		return;
	}
	if (size4)
		put_u32(b, (uint32_t)len);
	else
		put_u64(b, len);
	put(b, text, len);
}

int tracefs__tracing_data(const char *const *specs, size_t n, void **ret, size_t *ret_len)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	_cleanup_free_ char (*sys)[64] = calloc(n ? n : 1, 64);
	_cleanup_free_ char (*name)[64] = calloc(n ? n : 1, 64);
	struct blob b = { 0 };
	const char *dir;
	char path[512];
	uint32_t nsys = 0;

	if (!sys || !name)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (tracefs__split(specs[i], sys[i], name[i]) < 0)
			return -EINVAL;
	dir = tracefs__dir();
	if (!dir)
		return -errno;

	put(&b, magic, sizeof(magic));
	put(&b, "0.6", 4);
	put(&b, (uint8_t[]){ 0, (uint8_t)sizeof(long) }, 2); /* little endian, long size */
	put_u32(&b, (uint32_t)sysconf(_SC_PAGESIZE));
	put(&b, "header_page", 12);
	snprintf(path, sizeof(path), "%s/events/header_page", dir);
	put_file(&b, path, 0);
	put(&b, "header_event", 13);
	snprintf(path, sizeof(path), "%s/events/header_event", dir);
	put_file(&b, path, 0);
	put_u32(&b, 0); /* ftrace formats: none */

	/* subsystems in order of first use, each with its distinct events */
	for (size_t i = 0; i < n; i++) {
		int first = 1;

		for (size_t j = 0; j < i; j++)
			if (!strcmp(sys[j], sys[i]))
				first = 0;
		nsys += first;
	}
	put_u32(&b, nsys);
	for (size_t i = 0; i < n; i++) {
		uint32_t nev = 0;
		int seen = 0;

		for (size_t j = 0; j < i; j++)
			seen |= !strcmp(sys[j], sys[i]);
		if (seen)
			continue;
		put(&b, sys[i], strlen(sys[i]) + 1);
		for (size_t j = i; j < n; j++) {
			int dup = 0;

			for (size_t k = i; k < j; k++)
				dup |= !strcmp(sys[k], sys[j]) && !strcmp(name[k], name[j]);
			nev += !strcmp(sys[j], sys[i]) && !dup;
		}
		put_u32(&b, nev);
		for (size_t j = i; j < n; j++) {
			int dup = 0;

			for (size_t k = i; k < j; k++)
				dup |= !strcmp(sys[k], sys[j]) && !strcmp(name[k], name[j]);
			if (strcmp(sys[j], sys[i]) || dup)
				continue;
			snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, sys[j], name[j]);
			put_file(&b, path, 0);
		}
	}
	put_u32(&b, 0); /* kallsyms: none (perf writes none unless asked) */
	snprintf(path, sizeof(path), "%s/printk_formats", dir);
	put_file(&b, path, 1);
	put_u64(&b, 0); /* saved cmdlines: none */

	if (!b.err && b.f.oom)
		b.err = -ENOMEM;
	if (b.err) {
		fbuf__free(&b.f);
		return b.err;
	}
	*ret = b.f.data;
	*ret_len = b.f.len;
	return 0;
}
