/* precordd's files and disk budget: the closed recordings, oldest first, counted from what an
 * earlier run left; names (precord-SEQ-TIME.data, born .starting, .partial while open); and the
 * budget, enforced by deleting the oldest (see daemon.c for the invariant). */
#include "daemon/compact.h"
#include "daemon/daemon_int.h"
#include "daemon/export.h"
#include "lib/fileio.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file costs: its length, or its blocks when more (a sparse file never is). */
static uint64_t file_bytes(const struct stat *st)
{
	uint64_t b = (uint64_t)st->st_blocks * 512;

	return b > (uint64_t)st->st_size ? b : (uint64_t)st->st_size;
}

static bool parse_name(const char *name, uint32_t *ret_seq)
{
	unsigned int seq;
	int n = 0;
	size_t l = strlen(name);

	if (sscanf(name, "precord-%8u-%n", &seq, &n) != 1 || n != 17)
		return false;
	if (!(l > 5 && !strcmp(name + l - 5, ".data")) &&
	    !(l > 13 && !strcmp(name + l - 13, ".data.partial")))
		return false;
	*ret_seq = seq;
	return true;
}

static int cmp_files(const void *a, const void *b)
{
	const struct dfile *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void retention__clear(struct daemon *d)
{
	for (size_t i = 0; i < d->nr_files; i++)
		free(d->files[i].name);
	d->nr_files = 0;
	d->closed_bytes = 0;
}

static int files_add(struct daemon *d, uint32_t seq, const char *name, const struct stat *st)
{
	struct dfile *f;

	if (d->nr_files == d->cap_files) {
		size_t nc = d->cap_files ? d->cap_files * 2 : 32;
		struct dfile *nf = realloc(d->files, nc * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		d->files = nf;
		d->cap_files = nc;
	}
	f = &d->files[d->nr_files];
	f->name = strdup(name);
	if (!f->name)
		return -ENOMEM;
	f->seq = seq;
	f->bytes = file_bytes(st);
	f->mtime = st->st_mtime;
	d->nr_files++;
	d->closed_bytes += f->bytes;
	if (seq >= d->next_seq)
		d->next_seq = seq + 1;
	return 0;
}

/* Everything an earlier run left, counted against the budget from the start. */
static int scan_dir(struct daemon *d)
{
	DIR *dir;
	struct dirent *de;
	int err = 0;

	retention__clear(d);
	d->next_seq = 1;
	dir = opendir(d->cfg.output_dir);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		struct stat st;
		uint32_t seq;

		if (!strncmp(de->d_name, "precord-", 8) && strlen(de->d_name) > 14 &&
		    !strcmp(de->d_name + strlen(de->d_name) - 14, ".data.starting")) {
			/* a file a crash caught before its first sample: nothing to keep */
			unlinkat(dirfd(dir), de->d_name, 0);
			continue;
		}
		if (!strncmp(de->d_name, "precord-", 8) && strlen(de->d_name) > 15 &&
		    !strcmp(de->d_name + strlen(de->d_name) - 15, ".data.unwinding")) {
			/* a call-chain copy a crash left unfinished: its file is still there */
			unlinkat(dirfd(dir), de->d_name, 0);
			continue;
		}
		if (!parse_name(de->d_name, &seq))
			continue;
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		err = files_add(d, seq, de->d_name, &st);
		if (err)
			break;
	}
	closedir(dir);
	if (d->nr_files)
		qsort(d->files, d->nr_files, sizeof(*d->files), cmp_files);
	return err;
}

/* Returns the bytes of its profile deleted with it (export.h). */
static uint64_t delete_oldest(struct daemon *d, const char *why)
{
	uint64_t freed;

	struct dfile *f = &d->files[0];
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", d->cfg.output_dir, f->name);
	if (unlink(path) < 0 && errno != ENOENT)
		daemon__log(d, LOG_WARNING, "cannot delete %s: %m, ignoring", path);
	else
		daemon__log(d, LOG_DEBUG, "deleted %s (%s)", f->name, why);
	freed = export__forget(d, f->name);
	d->closed_bytes -= f->bytes;
	free(f->name);
	memmove(d->files, d->files + 1, (d->nr_files - 1) * sizeof(*d->files));
	d->nr_files--;
	d->deleted++;
	return freed;
}

/* Delete oldest files until the closed ones plus reserve fit in the budget, and those older
 * than max_age. */
void retention__enforce(struct daemon *d, uint64_t reserve)
{
	uint64_t budget = d->cfg.max_total_size, profiles = export__disk_bytes(d);

	/* the call-chain copy in progress (or next) counts too: see struct unwinding */
	if (d->nr_unwinding)
		reserve += d->unwinding[0].bytes;
	while (d->nr_files && d->closed_bytes + profiles + reserve > budget)
		profiles -= delete_oldest(d, "over the disk budget");
	if (d->cfg.max_age_ms) {
		time_t limit = time(NULL) - (time_t)(d->cfg.max_age_ms / 1000);

		while (d->nr_files && d->files[0].mtime < limit)
			delete_oldest(d, "older than max_age");
	}
}

void retention__make_name(struct daemon *d, uint32_t seq, char *buf, size_t size, bool partial)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(buf, size, "%s/precord-%08u-%s.data%s", d->cfg.output_dir, seq, ts,
		 partial ? ".partial" : "");
}

uint64_t retention__size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? file_bytes(&st) : 0;
}

uint64_t retention__size_of_fd(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* A new file is created as .data.starting and becomes .data.partial once its synthesized
 * start is written and its header says so: a kill meanwhile leaves a .starting file, which
 * holds no samples and is deleted at the next start, so only the one .partial file can be
 * damaged. */
void retention__starting_name(const char *partial, char *buf, size_t size)
{
	size_t l = strlen(partial) - strlen(".partial");

	snprintf(buf, size, "%.*s.starting", (int)l, partial);
}

/* The finalized file at path (a .partial) gets its final name and joins the closed list. */
void retention__close_file(struct daemon *d, const char *path, uint32_t seq)
{
	char final[PATH_MAX];
	size_t l = strlen(path);
	struct stat st;
	const char *base;

	snprintf(final, sizeof(final), "%.*s", (int)(l - strlen(".partial")), path);
	if (rename(path, final) < 0) {
		daemon__log(d, LOG_WARNING, "cannot rename %s: %m, keeping the name", path);
		snprintf(final, sizeof(final), "%s", path);
	}
	if (stat(final, &st) < 0)
		return;
	base = strrchr(final, '/') + 1;
	if (files_add(d, seq, base, &st) < 0)
		daemon__log(d, LOG_WARNING, "out of memory: %s is not counted, ignoring", base);
}

/* One directory of unsafe_dir: the last (output_dir itself) may not be open to others at all. */
static bool unsafe_one(const char *path, bool last, char *buf, size_t size)
{
	struct stat st;

	if (stat(path, &st) < 0)
		snprintf(buf, size, "cannot read %s: %s", path, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		snprintf(buf, size, "%s is not a directory", path);
	else if (st.st_uid != 0)
		snprintf(buf, size, "%s belongs to uid %u, not root: precordd creates and deletes "
			 "files below it as root; chown root it, or choose another output_dir", path,
			 (unsigned int)st.st_uid);
	else if ((st.st_mode & 022) && (last || !(st.st_mode & S_ISVTX)))
		snprintf(buf, size, "%s is writable by %s: precordd creates and deletes files below "
			 "it as root; chmod go-w it, or choose another output_dir", path,
			 st.st_mode & 002 ? "every user" : "its group");
	else
		return false;
	return true;
}

/* Whether only root can change what path names: every directory from / down to it owned by
 * root, and writable by no one else (for an ancestor, writable by others only with the
 * sticky bit, as /tmp is: others cannot rename or remove what root made there). precordd
 * creates and deletes files there as root: a directory a user could change would let it point
 * those at any file of the system (a symlinked .control, a swapped directory). Returns NULL
 * or why not, naming the directory, in buf. */
static const char *unsafe_dir(const char *dir, char *buf, size_t size)
{
	char path[PATH_MAX];
	size_t l = strlen(dir);

	if (l >= sizeof(path) || dir[0] != '/') {
		snprintf(buf, size, "%s is not an absolute path", dir);
		return buf;
	}
	if (unsafe_one("/", l == 1, buf, size))
		return buf;
	memcpy(path, dir, l + 1);
	for (size_t i = 1; i <= l; i++) {
		char c = path[i];

		if ((c != '/' && c) || path[i - 1] == '/')
			continue; /* inside a name, or a repeated or trailing slash */
		path[i] = 0;
		if (unsafe_one(path, !c || !path[i + 1], buf, size))
			return buf;
		path[i] = c;
	}
	return NULL;
}

int retention__control_dir(struct daemon *d, char *buf, size_t size, char *err, size_t err_size)
{
	struct stat st;

	snprintf(buf, size, "%s/" CTL_DIR, d->cfg.output_dir);
	if (mkdir(buf, 0700) < 0 && errno != EEXIST) {
		snprintf(err, err_size, "cannot create %s: %s", buf, strerror(errno));
		return -1;
	}
	if (lstat(buf, &st) < 0) {
		snprintf(err, err_size, "cannot read %s: %s", buf, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		snprintf(err, err_size, "%s is not a directory of root's that only root may enter "
			 "(a symlink, another's, or open to others): remove it, precordd makes its own",
			 buf);
		return -1;
	}
	return 0;
}

int retention__prepare_dir(struct daemon *d)
{
	char path[PATH_MAX], why[PATH_MAX + 200];
	int err;

	/* mkdir -p, 0750: the recordings show what runs on the machine */
	snprintf(path, sizeof(path), "%s", d->cfg.output_dir);
	err = fileio__mkdirs(path, 0750);
	if (err) {
		daemon__set_error(d, "cannot create %s: %s", path, strerror(-err));
		return err;
	}
	if (geteuid() == 0 && unsafe_dir(d->cfg.output_dir, why, sizeof(why))) {
		daemon__set_error(d, "output_dir %s is unsafe: %s", d->cfg.output_dir, why);
		return -EPERM;
	}
	if (access(d->cfg.output_dir, W_OK | X_OK) < 0) {
		err = -errno;
		daemon__set_error(d, "cannot write into %s: %s", d->cfg.output_dir, strerror(errno));
		return err;
	}
	err = scan_dir(d);
	if (err) {
		daemon__set_error(d, "cannot list %s: %s", d->cfg.output_dir, strerror(-err));
		return err;
	}
	/* Control recordings are unlinked as they start; any left were cut short by a crash. */
	if (retention__control_dir(d, path, sizeof(path), why, sizeof(why)) < 0) {
		daemon__set_error(d, "%s", why);
		return -EPERM;
	}
	{
		int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
		struct dirent *de;

		if (!dir && dfd >= 0)
			close(dfd);
		while (dir && (de = readdir(dir)))
			if (de->d_name[0] != '.')
				unlinkat(dirfd(dir), de->d_name, 0);
		if (dir)
			closedir(dir);
	}
	return 0;
}

void retention__unwind_last(struct daemon *d)
{
	struct dfile *f;
	char path[PATH_MAX];
	struct unwinding *u;

	if (!d->nr_files)
		return;
	f = &d->files[d->nr_files - 1];
	if (!d->compactor || !d->cfg.unwind || d->cfg.callgraph != CALLGRAPH_DWARF) {
		export__file_ready(d, f); /* already in its final form */
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", d->cfg.output_dir, f->name);
	/* Its copy needs room beside it and the open file: where the budget cannot hold all
	 * three, making it would delete the file itself. */
	if (2 * f->bytes + d->cfg.rotate_size > d->cfg.max_total_size) {
		daemon__log(d, LOG_DEBUG, "%s is kept with its stacks: max_total_size has no room "
			    "for its call-chain copy beside it and the open file", path);
		export__file_ready(d, f);
		return;
	}
	if (d->nr_unwinding == MAX_UNWINDING || compactor__submit(d->compactor, path) < 0) {
		daemon__log(d, LOG_WARNING, "%s is kept with its stacks: the unwinding queue is full",
			    path);
		export__file_ready(d, f);
		return;
	}
	u = &d->unwinding[d->nr_unwinding];
	u->path = strdup(path);
	u->bytes = f->bytes;
	if (u->path)
		d->nr_unwinding++;
	/* without its entry the copy is not counted: never the case but for lack of memory */
}

/* The compactor gave back the file at path: it leaves the list (the first, normally). */
static void unwinding_done(struct daemon *d, const char *path)
{
	for (size_t i = 0; i < d->nr_unwinding; i++) {
		if (strcmp(d->unwinding[i].path, path))
			continue;
		free(d->unwinding[i].path);
		memmove(d->unwinding + i, d->unwinding + i + 1,
			(d->nr_unwinding - i - 1) * sizeof(*d->unwinding));
		d->nr_unwinding--;
		return;
	}
}

void retention__clear_unwinding(struct daemon *d)
{
	for (size_t i = 0; i < d->nr_unwinding; i++)
		free(d->unwinding[i].path);
	d->nr_unwinding = 0;
	d->unwinding_disk = 0;
}

void retention__take_unwound(struct daemon *d)
{
	struct compact_done r;

	while (d->compactor && compactor__take(d->compactor, &r)) {
		const char *base = strrchr(r.path, '/') ? strrchr(r.path, '/') + 1 : r.path;
		struct dfile *f = NULL;
		struct stat st;

		unwinding_done(d, r.path);
		for (size_t i = 0; i < d->nr_files && !f; i++)
			if (!strcmp(d->files[i].name, base))
				f = &d->files[i];
		if (r.err) {
			daemon__log(d, LOG_WARNING, "cannot unwind %s, keeping it with its stacks: %s",
				    r.path, r.why);
			if (f)
				export__file_ready(d, f);
			continue;
		}
		if (!f || stat(r.tmp, &st) < 0 || rename(r.tmp, r.path) < 0) {
			unlink(r.tmp); /* deleted meanwhile (budget, age) */
			continue;
		}
		d->closed_bytes -= f->bytes;
		f->bytes = file_bytes(&st);
		d->closed_bytes += f->bytes;
		d->unwound++;
		d->unwound_saved += r.st.bytes_in > r.st.bytes_out ? r.st.bytes_in - r.st.bytes_out : 0;
		export__file_ready(d, f);
		/* (the isolated process's counts stay there: the sizes tell the saving) */
		daemon__log(d, LOG_DEBUG, "unwound %s: %llu -> %llu bytes", base,
			    (unsigned long long)r.st.bytes_in,
			    (unsigned long long)r.st.bytes_out);
	}
	d->unwinding_disk = 0;
	if (d->nr_unwinding) {
		char tmp[PATH_MAX + 16];

		snprintf(tmp, sizeof(tmp), "%s.unwinding", d->unwinding[0].path);
		d->unwinding_disk = retention__size_of(tmp);
	}
}
