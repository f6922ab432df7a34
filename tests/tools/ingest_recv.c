/* ingest_recv: a strict stand-in for a Grafana Pyroscope server's HTTP ingest API (POST /ingest,
 * https://grafana.com/docs/pyroscope/latest/configure-server/about-server-api/), for precordd's
 * push tests. It serves one request per connection on 127.0.0.1 and accepts only what the
 * documented API describes for pprof: query parameters name (required, APP or APP{k=v,...}),
 * from and until (required, unix seconds, from <= until), format=pprof, and the optional
 * sampleRate, spyName, units, aggregationType; the body either the profile itself or a
 * multipart/form-data form whose file field "profile" holds it (and optionally
 * "sample_type_config", a JSON object). The profile must be gzip'd profile.proto that protobuf-c
 * unpacks and whose references (strings, sample types, locations, mappings, functions) all
 * resolve. Anything else is answered 400 (404 for another path, 405 for another method, 411
 * without a Content-Length) with the reason.
 *
 * Each request appends a line to DIR/log: "ok NAME FROM UNTIL BYTES FILE" or "rejected STATUS
 * REASON"; an accepted profile is saved as DIR/NNNN.pb.gz (the gzip'd bytes as received). The
 * port bound is written to DIR/port once listening (PORT 0: any free one).
 *
 * usage: ingest_recv DIR [PORT] */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "report/profile.pb-c.h"

#define MAX_HEAD 16384
#define MAX_BODY (64u << 20)

static const char *dir;
static unsigned int nr_saved;

struct req {
	char head[MAX_HEAD + 1];
	char *body;
	size_t body_len;
	char query[MAX_HEAD];
	char content_type[512];
	long long content_length;
	char method[16], path[MAX_HEAD];
	/* query */
	char name[1024];
	long long from, until;
	bool has_name, has_from, has_until, pprof;
};

static char reason[512];

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return 400;
}

static void logf_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_line(const char *fmt, ...)
{
	char path[4096];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/log", dir);
	f = fopen(path, "a");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

/* ---- the request ---- */

static int read_all(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

/* Reads the head byte by byte up to the blank line (requests are small and few). */
static int read_head(int fd, struct req *r)
{
	size_t n = 0;

	while (n < MAX_HEAD) {
		if (read(fd, r->head + n, 1) != 1)
			return -1;
		n++;
		if (n >= 4 && !memcmp(r->head + n - 4, "\r\n\r\n", 4)) {
			r->head[n] = 0;
			return 0;
		}
	}
	return -1;
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

/* Percent-decoding ('+' is a space in a query); -1 for a bad escape or a NUL. */
static int unescape(const char *s, size_t len, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)s[i];

		if (c == '%') {
			if (i + 2 >= len || hexval((unsigned char)s[i + 1]) < 0 ||
			    hexval((unsigned char)s[i + 2]) < 0)
				return -1;
			c = hexval((unsigned char)s[i + 1]) * 16 + hexval((unsigned char)s[i + 2]);
			i += 2;
		} else if (c == '+') {
			c = ' ';
		}
		if (!c || o + 1 >= size)
			return -1;
		out[o++] = (char)c;
	}
	out[o] = 0;
	return 0;
}

static bool parse_secs(const char *v, long long *ret)
{
	char *end;

	if (!*v || !isdigit((unsigned char)*v))
		return false;
	errno = 0;
	*ret = strtoll(v, &end, 10);
	return !*end && !errno && *ret > 0;
}

/* APP or APP{key=value,...}: the name Pyroscope documents ("my.awesome.app.cpu{env=staging,
 * region=us-west-1}"). */
static int check_name(const char *n)
{
	const char *b = strchr(n, '{');
	size_t al = b ? (size_t)(b - n) : strlen(n);

	if (!al)
		return bad("name: no application name before the labels");
	for (size_t i = 0; i < al; i++)
		if (!isalnum((unsigned char)n[i]) && !strchr("._-", n[i]))
			return bad("name: '%c' in the application name", n[i]);
	if (!b)
		return 0;
	if (n[strlen(n) - 1] != '}')
		return bad("name: the labels do not end in '}'");
	for (const char *p = b + 1; *p != '}';) {
		const char *eq = p + strcspn(p, "=,}"), *end;

		if (*eq != '=' || eq == p)
			return bad("name: a label without key=value");
		for (const char *k = p; k < eq; k++)
			if (!isalnum((unsigned char)*k) && *k != '_')
				return bad("name: '%c' in a label key", *k);
		end = eq + 1 + strcspn(eq + 1, ",}={");
		if (end == eq + 1 || (*end != ',' && *end != '}'))
			return bad("name: a label without a value, or a value with '=' or '{'");
		p = *end == ',' ? end + 1 : end;
		if (*end == ',' && *p == '}')
			return bad("name: a trailing ','");
	}
	return 0;
}

static int parse_query(struct req *r)
{
	char *q = r->query, *tok;

	while ((tok = strsep(&q, "&"))) {
		char *eq = strchr(tok, '='), val[1024];

		if (!eq)
			return bad("query: '%.60s' is not key=value", tok);
		*eq = 0;
		if (unescape(eq + 1, strlen(eq + 1), val, sizeof(val)) < 0)
			return bad("query: a bad %%-escape in %s", tok);
		if (!strcmp(tok, "name")) {
			if (r->has_name)
				return bad("query: name given twice");
			r->has_name = true;
			snprintf(r->name, sizeof(r->name), "%s", val);
		} else if (!strcmp(tok, "from") || !strcmp(tok, "until")) {
			bool from = tok[0] == 'f';

			if ((from && r->has_from) || (!from && r->has_until))
				return bad("query: %s given twice", tok);
			if (!parse_secs(val, from ? &r->from : &r->until))
				return bad("query: %s '%.40s' is not unix seconds", tok, val);
			*(from ? &r->has_from : &r->has_until) = true;
		} else if (!strcmp(tok, "format")) {
			if (strcmp(val, "pprof"))
				return bad("query: this receiver takes format=pprof only, not '%.40s'", val);
			r->pprof = true;
		} else if (!strcmp(tok, "sampleRate")) {
			long long hz;

			if (!parse_secs(val, &hz))
				return bad("query: sampleRate '%.40s' is not a positive number", val);
		} else if (strcmp(tok, "spyName") && strcmp(tok, "units") &&
			   strcmp(tok, "aggregationType")) {
			return bad("query: unknown parameter '%.40s'", tok);
		}
	}
	if (!r->has_name || !r->name[0])
		return bad("query: no name (required)");
	if (!r->has_from || !r->has_until)
		return bad("query: from and until are required");
	if (r->from > r->until)
		return bad("query: from %lld is after until %lld", r->from, r->until);
	if (!r->pprof)
		return bad("query: no format=pprof");
	return check_name(r->name);
}

/* The head: request line, Content-Length, Content-Type, no Transfer-Encoding. */
static int parse_head(struct req *r)
{
	char *line, *save = NULL, *head = strdup(r->head), *target;
	int st = 0;
	bool first = true;

	r->content_length = -1;
	for (line = strtok_r(head, "\r\n", &save); line && !st; line = strtok_r(NULL, "\r\n", &save)) {
		char *colon;

		if (first) {
			char ver[16];

			first = false;
			target = r->path;
			if (sscanf(line, "%15s %16383s %15s", r->method, target, ver) != 3 ||
			    strncmp(ver, "HTTP/1.", 7))
				st = bad("not an HTTP/1.x request line");
			continue;
		}
		colon = strchr(line, ':');
		if (!colon) {
			st = bad("a header line without ':'");
			break;
		}
		*colon++ = 0;
		while (*colon == ' ' || *colon == '\t')
			colon++;
		if (!strcasecmp(line, "Content-Length")) {
			char *end;

			r->content_length = strtoll(colon, &end, 10);
			if (*end || r->content_length < 0)
				st = bad("a bad Content-Length");
		} else if (!strcasecmp(line, "Content-Type")) {
			snprintf(r->content_type, sizeof(r->content_type), "%s", colon);
		} else if (!strcasecmp(line, "Transfer-Encoding")) {
			st = 411;
			snprintf(reason, sizeof(reason), "Transfer-Encoding is not taken: send a Content-Length");
		}
	}
	free(head);
	if (st)
		return st;
	if (strcmp(r->method, "POST")) {
		snprintf(reason, sizeof(reason), "method %s: /ingest takes POST", r->method);
		return 405;
	}
	{
		char *qm = strchr(r->path, '?');

		if (qm)
			*qm = 0;
		if (strcmp(r->path, "/ingest")) {
			snprintf(reason, sizeof(reason), "no such path %.100s", r->path);
			return 404;
		}
		if (!qm)
			return bad("no query: name, from and until are required");
		snprintf(r->query, sizeof(r->query), "%s", qm + 1);
	}
	if (r->content_length < 0) {
		snprintf(reason, sizeof(reason), "no Content-Length");
		return 411;
	}
	if (r->content_length == 0 || r->content_length > MAX_BODY)
		return bad("an empty body, or one over 64 MiB");
	return parse_query(r);
}

/* ---- the body ---- */

static const char *memmem_str(const char *h, size_t hl, const char *n)
{
	return memmem(h, hl, n, strlen(n));
}

/* The "profile" part of a multipart/form-data body (RFC 7578): *ret points into the body. */
static int multipart_profile(struct req *r, const char **ret, size_t *ret_len)
{
	const char *b = strstr(r->content_type, "boundary="), *p, *end = r->body + r->body_len;
	char delim[300];
	bool got = false;

	if (!b || !b[9])
		return bad("multipart/form-data without a boundary");
	b += 9;
	snprintf(delim, sizeof(delim), "--%.*s", (int)strcspn(b, "; \""), b[0] == '"' ? b + 1 : b);
	if (r->body_len < strlen(delim) || memcmp(r->body, delim, strlen(delim)))
		return bad("multipart: the body does not start with the boundary");
	p = r->body + strlen(delim);
	for (;;) {
		const char *hend, *next, *name;
		char field[64] = "";

		if (end - p >= 2 && !memcmp(p, "--", 2))
			break; /* the closing delimiter */
		if (end - p < 2 || memcmp(p, "\r\n", 2))
			return bad("multipart: no CRLF after a boundary");
		p += 2;
		hend = memmem_str(p, end - p, "\r\n\r\n");
		if (!hend)
			return bad("multipart: a part without headers");
		name = memmem_str(p, hend - p, "name=\"");
		if (!name || !memmem_str(p, hend - p, "Content-Disposition: form-data"))
			return bad("multipart: a part that is not a named form-data field");
		snprintf(field, sizeof(field), "%.*s", (int)strcspn(name + 6, "\""), name + 6);
		hend += 4;
		{
			char d2[310];

			snprintf(d2, sizeof(d2), "\r\n%s", delim);
			next = memmem_str(hend, end - hend, d2);
			if (!next)
				return bad("multipart: part %s has no closing boundary", field);
		}
		if (!strcmp(field, "profile")) {
			if (got)
				return bad("multipart: two profile fields");
			got = true;
			*ret = hend;
			*ret_len = next - hend;
		} else if (!strcmp(field, "sample_type_config")) {
			if (next == hend || *hend != '{')
				return bad("multipart: sample_type_config is not a JSON object");
		} else if (strcmp(field, "prev_profile")) {
			return bad("multipart: unknown field '%s'", field);
		}
		p = next + 2 + strlen(delim);
	}
	if (!got)
		return bad("multipart: no field named profile");
	return 0;
}

static int gunzip(const char *in, size_t len, uint8_t **ret, size_t *ret_len)
{
	z_stream z = { 0 };
	size_t cap = len * 4 + 1024, n = 0;
	uint8_t *out = malloc(cap);
	int zr;

	if (len < 2 || (uint8_t)in[0] != 0x1f || (uint8_t)in[1] != 0x8b) {
		free(out);
		return bad("the profile is not gzip'd (no 1f 8b magic)");
	}
	if (!out || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		free(out);
		return bad("out of memory");
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	do {
		if (n == cap) {
			uint8_t *o = cap < (256u << 20) ? realloc(out, cap * 2) : NULL;

			if (!o) {
				inflateEnd(&z);
				free(out);
				return bad("the profile inflates beyond 512 MiB");
			}
			out = o;
			cap *= 2;
		}
		z.next_out = out + n;
		z.avail_out = (uInt)(cap - n);
		zr = inflate(&z, Z_NO_FLUSH);
		n = cap - z.avail_out;
	} while (zr == Z_OK);
	inflateEnd(&z);
	if (zr != Z_STREAM_END || z.avail_in) {
		free(out);
		return bad("the profile's gzip stream is damaged or has trailing bytes");
	}
	*ret = out;
	*ret_len = n;
	return 0;
}

/* profile.proto's references, as go tool pprof checks them. */
static int check_profile(const Perftools__Profiles__Profile *p)
{
	size_t ns = p->n_string_table;

#define STR_OK(i) ((i) >= 0 && (size_t)(i) < ns)
	if (!ns || p->string_table[0][0])
		return bad("profile: string_table[0] is not \"\"");
	if (!p->n_sample_type)
		return bad("profile: no sample_type");
	for (size_t i = 0; i < p->n_sample_type; i++)
		if (!STR_OK(p->sample_type[i]->type) || !STR_OK(p->sample_type[i]->unit))
			return bad("profile: sample_type %zu names no string", i);
	for (size_t i = 0; i < p->n_mapping; i++)
		if (!p->mapping[i]->id)
			return bad("profile: mapping %zu has id 0", i);
	for (size_t i = 0; i < p->n_function; i++)
		if (!p->function[i]->id || !STR_OK(p->function[i]->name) ||
		    !STR_OK(p->function[i]->system_name) || !STR_OK(p->function[i]->filename))
			return bad("profile: function %zu has id 0 or names no string", i);
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		bool mf = !l->mapping_id;

		for (size_t k = 0; k < p->n_mapping && !mf; k++)
			mf = p->mapping[k]->id == l->mapping_id;
		if (!l->id || !mf)
			return bad("profile: location %zu has id 0 or an unknown mapping", i);
		for (size_t k = 0; k < l->n_line; k++) {
			bool ff = false;

			for (size_t m = 0; m < p->n_function && !ff; m++)
				ff = p->function[m]->id == l->line[k]->function_id;
			if (!ff)
				return bad("profile: location %zu has a line of an unknown function", i);
		}
	}
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		if (s->n_value != p->n_sample_type)
			return bad("profile: sample %zu has %zu values for %zu sample types", i,
				   s->n_value, p->n_sample_type);
		for (size_t k = 0; k < s->n_location_id; k++)
			if (!s->location_id[k] || s->location_id[k] > p->n_location ||
			    p->location[s->location_id[k] - 1]->id != s->location_id[k])
				return bad("profile: sample %zu has an unknown location", i);
		for (size_t k = 0; k < s->n_label; k++)
			if (!STR_OK(s->label[k]->key) || !s->label[k]->key || !STR_OK(s->label[k]->str))
				return bad("profile: sample %zu has a label naming no string", i);
	}
	return 0;
#undef STR_OK
}

static int check_body(struct req *r, const char **ret, size_t *ret_len)
{
	const char *prof = r->body;
	size_t len = r->body_len;
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	Perftools__Profiles__Profile *p;
	int st = 0;

	if (!strncasecmp(r->content_type, "multipart/form-data", 19))
		st = multipart_profile(r, &prof, &len);
	if (!st)
		st = gunzip(prof, len, &raw, &raw_len);
	if (st)
		return st;
	p = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	free(raw);
	if (!p)
		return bad("the profile is not a profile.proto message (protobuf-c cannot unpack it)");
	st = check_profile(p);
	perftools__profiles__profile__free_unpacked(p, NULL);
	*ret = prof;
	*ret_len = len;
	return st;
}

static void answer(int fd, int status, const char *text)
{
	char buf[1024];
	const char *what = status == 200 ? "OK" : status == 404 ? "Not Found" :
			   status == 405 ? "Method Not Allowed" : status == 411 ? "Length Required" :
			   "Bad Request";
	int n = snprintf(buf, sizeof(buf), "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", status, what,
			 strlen(text), text);

	if (n > 0 && write(fd, buf, (size_t)n) < 0)
		return;
}

static void serve(int fd)
{
	static struct req r;
	const char *prof = NULL;
	size_t len = 0;
	int st;

	memset(&r, 0, sizeof(r));
	reason[0] = 0;
	if (read_head(fd, &r) < 0) {
		logf_line("rejected 400 a request head that does not end, or over 16 KiB");
		answer(fd, 400, "bad request head\n");
		return;
	}
	st = parse_head(&r);
	if (!st) {
		r.body = malloc(r.content_length);
		r.body_len = r.content_length;
		if (!r.body || read_all(fd, r.body, r.body_len) < 0)
			st = bad("the body is shorter than its Content-Length");
	}
	if (!st)
		st = check_body(&r, &prof, &len);
	if (st) {
		logf_line("rejected %d %s", st, reason);
		snprintf(reason + strlen(reason), sizeof(reason) - strlen(reason), "\n");
		answer(fd, st, reason);
	} else {
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%04u.pb.gz", dir, ++nr_saved);
		f = fopen(path, "w");
		if (!f || fwrite(prof, 1, len, f) != len || fclose(f)) {
			logf_line("rejected 500 cannot save %s", path);
			answer(fd, 500, "cannot save\n");
		} else {
			logf_line("ok %s %lld %lld %zu %s", r.name, r.from, r.until, len, path);
			answer(fd, 200, "");
		}
	}
	free(r.body);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	char path[4096], tmp[4100];
	int ls, one = 1;
	FILE *f;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: ingest_recv DIR [PORT]\n");
		return 2;
	}
	dir = argv[1];
	signal(SIGPIPE, SIG_IGN);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(argc == 3 ? (uint16_t)atoi(argv[2]) : 0);
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 16) < 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &al) < 0) {
		perror("ingest_recv: cannot listen on 127.0.0.1");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/port", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%u\n", ntohs(a.sin_port)) < 0 || fclose(f) || rename(tmp, path)) {
		perror("ingest_recv: cannot write the port");
		return 1;
	}
	for (;;) {
		int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EINTR)
				continue;
			perror("ingest_recv: accept");
			return 1;
		}
		serve(c);
		close(c);
	}
}
