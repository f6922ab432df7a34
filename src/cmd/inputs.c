/* preport's inputs. A directory stands for its precord-*.data files: precordd's finished
 * files, named precord-SEQUENCE-TIME.data with an 8-digit sequence, so that name order is the
 * order they were recorded in; the file being written (.partial) and the daemon's temporary
 * files (.starting, .unwinding) do not end in .data and are left out. */
#include "cmd/inputs.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf/reader.h"

static int push(struct inputs *in, char *path)
{
	char **n = realloc(in->paths, (in->nr + 1) * sizeof(*n));

	if (!n) {
		free(path);
		return -ENOMEM;
	}
	in->paths = n;
	in->paths[in->nr++] = path;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool daemon_file(const char *name)
{
	size_t l = strlen(name);

	return !strncmp(name, "precord-", 8) && l > 13 && !strcmp(name + l - 5, ".data");
}

static int add_dir(struct inputs *in, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t first = in->nr;
	int e = 0;

	if (!d) {
		e = -errno;
		snprintf(in->err, sizeof(in->err), "cannot read the directory %s: %s", dir, strerror(-e));
		return e;
	}
	while (!e && (de = readdir(d))) {
		char *p;

		if (!daemon_file(de->d_name))
			continue;
		if (asprintf(&p, "%s/%s", dir, de->d_name) < 0)
			e = -ENOMEM;
		else
			e = push(in, p);
	}
	closedir(d);
	if (e) {
		snprintf(in->err, sizeof(in->err), "cannot list %s: %s", dir, strerror(-e));
		return e;
	}
	if (in->nr == first) {
		snprintf(in->err, sizeof(in->err), "%s is a directory without precord-*.data files (precordd's "
			 "output directories hold its finished recordings under that name): give a "
			 "perf.data file or such a directory with -i", dir);
		return -ENOENT;
	}
	qsort(in->paths + first, in->nr - first, sizeof(*in->paths), by_name);
	return 0;
}

const char *inputs__error(const struct inputs *in)
{
	return in->err;
}

int inputs__add(struct inputs *in, const char *arg)
{
	struct stat st;
	char *p;
	int e;

	in->err[0] = 0;
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
		return add_dir(in, arg);
	p = strdup(arg);
	e = p ? push(in, p) : -ENOMEM;
	if (e)
		snprintf(in->err, sizeof(in->err), "cannot add %s: %s", arg, strerror(-e));
	return e;
}

struct timed {
	char *path;
	uint64_t first, last;   /* sample times */
	uint64_t key;           /* the first sample's wall-clock time, else its sample time */
	bool wall;
	size_t pos;
};

static int by_time(const void *a, const void *b)
{
	const struct timed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

void inputs__sort(struct inputs *in, uint64_t *ret_first, uint64_t *ret_last)
{
	struct timed *t = calloc(in->nr ? in->nr : 1, sizeof(*t));
	bool all = t != NULL, every_wall = true;
	uint64_t first = UINT64_MAX, last = 0;

	for (size_t i = 0; all && i < in->nr; i++) {
		struct perf_reader *r;
		struct stat st;

		/* a pipe is read once, by the session: no times from it, and no order */
		if ((strcmp(in->paths[i], "-") ? stat(in->paths[i], &st) : fstat(STDIN_FILENO, &st)) ||
		    !S_ISREG(st.st_mode)) {
			all = false;
			break;
		}
		r = perf_reader__new(NULL);
		all = r && perf_reader__open(r, in->paths[i]) == 0 &&
		      perf_reader__has_feature(r, FEAT_SAMPLE_TIME);
		if (all) {
			const struct perf_reader_info *info = perf_reader__info(r);

			t[i] = (struct timed){ in->paths[i], info->first_sample_time,
					       info->last_sample_time, info->first_sample_time,
					       info->has_clock, i };
			if (info->has_clock)
				t[i].key = info->clock.wall_ns + (info->first_sample_time -
								  info->clock.clock_ns);
			first = info->first_sample_time < first ? info->first_sample_time : first;
			last = info->last_sample_time > last ? info->last_sample_time : last;
		}
		perf_reader__free(r);
	}
	*ret_first = all && in->nr ? first : 0;
	*ret_last = all && in->nr ? last : 0;
	for (size_t i = 0; all && i < in->nr; i++)
		every_wall &= t[i].wall;
	for (size_t i = 0; all && !every_wall && i < in->nr; i++)
		t[i].key = t[i].first;          /* wall-clock times for all, or for none */
	if (all && in->nr > 1) {
		qsort(t, in->nr, sizeof(*t), by_time);
		for (size_t i = 0; i < in->nr; i++)
			in->paths[i] = t[i].path;
	}
	free(t);
}

void inputs__free(struct inputs *in)
{
	for (size_t i = 0; i < in->nr; i++)
		free(in->paths[i]);
	free(in->paths);
	in->paths = NULL;
	in->nr = 0;
}
