/* The HTTP side of pushing: read the profile, build the query, one POST with libcurl, classify
 * the answer. Nothing here retries or remembers anything: the spool (export.c) decides when to
 * try again. CURLOPT_NOSIGNAL: the push runs on a thread of a daemon whose signals are taken by
 * a signalfd, and curl must not arm SIGALRM for its DNS timeouts. */
#include "daemon/push.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"

/* A profile larger than this is not a profile precordd wrote. */
#define MAX_PROFILE (256u << 20)

int push__init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -ENOMEM;
}

int push__app_name(const struct push_target *t, char *buf, size_t size)
{
	char host[256];
	size_t i;
	int n;

	for (i = 0; t->host[i] && i < sizeof(host) - 1; i++) {
		unsigned char c = (unsigned char)t->host[i];

		host[i] = isalnum(c) || c == '.' || c == '-' || c == '_' ? (char)c : '_';
	}
	host[i] = 0;
	n = snprintf(buf, size, "%s{host=%s%s%s}", t->name, i ? host : "unknown",
		     t->labels ? "," : "", t->labels ? t->labels : "");
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int read_file(const char *path, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > MAX_PROFILE)
		return -EINVAL;
	buf = malloc(st.st_size);
	if (!buf)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		got += r;
	}
	*ret = TAKE_PTR(buf);
	*ret_len = got;
	return 0;
}

struct answer {
	char text[160];
	size_t len;
};

/* The start of the server's answer, for the log; the rest is read and dropped. */
static size_t on_body(char *p, size_t sz, size_t n, void *ctx)
{
	struct answer *a = ctx;
	size_t l = sz * n;

	for (size_t i = 0; i < l && a->len < sizeof(a->text) - 1; i++)
		a->text[a->len++] = isprint((unsigned char)p[i]) ? p[i] : ' ';
	a->text[a->len] = 0;
	return l;
}

static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const volatile bool *stop = ctx;

	return stop && *stop; /* non-zero: curl aborts the transfer */
}

/* The URL: base/ingest?name=...&from=...&until=...&format=pprof&sampleRate=...&spyName=.... */
static char *make_url(CURL *c, const struct push_target *t, time_t from, time_t until)
{
	char name[1024];
	char *esc, *url = NULL;

	if (push__app_name(t, name, sizeof(name)) < 0)
		return NULL;
	esc = curl_easy_escape(c, name, 0);
	if (!esc)
		return NULL;
	if (asprintf(&url, "%s/ingest?name=%s&from=%lld&until=%lld&format=pprof&sampleRate=%llu"
		     "&spyName=precordd", t->url, esc, (long long)from, (long long)until,
		     (unsigned long long)t->sample_rate) < 0)
		url = NULL;
	curl_free(esc);
	return url;
}

static enum push_result classify(CURLcode rc, long status, const struct answer *a,
				 const char *err, char *why, size_t why_size)
{
	if (rc != CURLE_OK) {
		snprintf(why, why_size, "%s", err[0] ? err : curl_easy_strerror(rc));
		return PUSH_RETRY;
	}
	if (status >= 200 && status < 300)
		return PUSH_OK;
	snprintf(why, why_size, "the server answered %ld%s%s", status, a->len ? ": " : "", a->text);
	if (status >= 400 && status < 500 && status != 408 && status != 429)
		return PUSH_REJECTED;
	return PUSH_RETRY;
}

const char *push__error(const struct push_target *t)
{
	return t->error;
}

enum push_result push__profile(struct push_target *t, const char *path, time_t from,
			       time_t until)
{
	char *why = t->error;
	size_t why_size = sizeof(t->error);
	_cleanup_free_ char *data = NULL, *url = NULL;
	char err[CURL_ERROR_SIZE] = "";
	struct answer a = { .len = 0 };
	enum push_result res = PUSH_RETRY;
	curl_mime *mime = NULL;
	curl_mimepart *part;
	size_t len = 0;
	long status = 0;
	CURLcode rc;
	CURL *c;
	int e;

	e = read_file(path, &data, &len);
	if (e) {
		snprintf(why, why_size, "cannot read %s: %s", path,
			 e == -EINVAL ? "not a regular file of 1 byte to 256 MiB" : strerror(-e));
		return e == -ENOMEM ? PUSH_RETRY : PUSH_BAD_FILE;
	}
	c = curl_easy_init();
	if (!c || !(url = make_url(c, t, from, until)) || !(mime = curl_mime_init(c)) ||
	    !(part = curl_mime_addpart(mime))) {
		snprintf(why, why_size, "out of memory");
		goto out;
	}
	curl_mime_name(part, "profile");
	curl_mime_filename(part, "profile.pprof");
	curl_mime_type(part, "application/octet-stream");
	curl_mime_data(part, data, len);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)t->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)t->timeout_ms);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "precordd/" PRECORD_VERSION);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)t->stop);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	res = classify(rc, status, &a, err, why, why_size);
out:
	curl_mime_free(mime);
	curl_easy_cleanup(c);
	return res;
}
