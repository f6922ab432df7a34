/* The aggregation sink: converts each resolved sample's frames into report frames (perf's
 * names: the short dso name, callers at return address - 1) and adds it to its event's report.
 * Runs on the session's thread, so the reports need no locking. */
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf/abi.h"
#include "report/aggregate.h"
#include "report/report_int.h"
#include "unwind/elfcache.h"
#include "unwind/inlines.h"
#include "unwind/symbols.h"

#define MAX_FRAMES 1024

/* Room for the srclines of one sample's frames. */
struct srcbuf {
	char text[MAX_FRAMES * 256];    /* a C++ sym+offset or a full path: 100-200 bytes */
	size_t used;
	bool full_path;                 /* --full-source-path */
};

/* Stacks seen before, by their unwound frames: a sample whose frames are those of one of them
 * takes its place in the report's tree without converting the frames again (their inlined
 * functions, srclines, names) or looking each one up. Exact: a frame's report frames depend
 * on the frame alone (inline answers are kept per address), and the key is every field of
 * every frame. Direct-mapped; a collision replaces. */
#define CHAIN_MEMO 4096

struct chain_memo {
	uint64_t hash;
	size_t attr, nr;
	bool filtered;
	struct unwind_frame *frames;    /* a copy, room for cap */
	size_t cap;
	struct report_chain chain;
	const char *parent;     /* the chain's parent symbol (report_sample.parent) */
};

/* A regex on frames' names, and its answers by name (the names are the symbols' and inline
 * records' strings, which stay put: keyed by address). */
struct name_regex {
	bool on;
	regex_t re;
	struct name_answer { const char *name; bool match; } *answers;
	size_t nr, cap;
	struct htab ht;                 /* answers by name */
};

enum report_inline {
	REPORT_INLINE_NONE,       /* --no-inline */
	REPORT_INLINE_LEAF_FIRST, /* perf resolving a callee-ordered chain */
	REPORT_INLINE_ROOT_FIRST, /* a caller-ordered one (-g caller, --children by default) */
};

/* How a sample's frames become report frames (frames_of). */
struct frames_how {
	enum report_inline order; /* the order the DWARF is asked in (NONE: not asked) */
	bool expand;              /* inlined functions become frames of their own */
	bool mangled;             /* --no-demangle */
	struct srcbuf *sb;        /* NULL: no srclines nor srcfiles */
	bool srclines, srcfiles;  /* which of them (into sb) */
};

struct report_set {
	struct report **reports;
	size_t nr;
	struct frames_how how;  /* the same for every sample */
	struct report_frame frames[MAX_FRAMES];
	struct srcbuf sb;
	struct chain_memo memo[CHAIN_MEMO];
	uint64_t memo_hits;
	/* --dsos, --symbols (report_opts) */
	const char *const *dsos;
	size_t nr_dsos;
	const char *const *symbols;
	size_t nr_symbols;
	struct name_regex ignore;       /* --ignore-callees */
	struct name_regex parent;       /* -p, or the parent key's default */
	bool caller;                    /* chains are walked from the root (perf's caller order) */
};

/* fmt's text copied into b until the sample's next frames; NULL when b is full. */
static const char *srcbuf_add(struct srcbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static const char *srcbuf_add(struct srcbuf *b, const char *fmt, ...)
{
	va_list ap;
	char *at = b->text + b->used;
	size_t room = sizeof(b->text) - b->used;
	int n;

	if (room < 2)
		return NULL;
	va_start(ap, fmt);
	n = vsnprintf(at, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room)
		return NULL;
	b->used += (size_t)n + 1;
	return at;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* perf's srcline of a frame perf did not expand: "??:0" in a file with DWARF that does not
 * cover it but whose symbol table does (addr2line names the symbol, without a line), else
 * "sym+offset" (decimal; PLT entries, which addr2line does not know), else "dso[address]". */
static const char *plain_srcline(struct srcbuf *b, const struct unwind_frame *f,
				 const struct report_frame *rf)
{
	size_t len = rf->sym ? strlen(rf->sym) : 0;
	struct elf_file *ef;
	const char *t;

	if (f->dso && !f->kernel && dso__kind(f->dso) == DSO_FILE && (ef = dso__elf(f->dso)) &&
	    elf_file__has_dwarf(ef) && rf->sym && !(len > 4 && !strcmp(rf->sym + len - 4, "@plt")))
		return "??:0";
	if (rf->sym)
		t = srcbuf_add(b, "%s+%llu", rf->sym, (unsigned long long)(rf->map_ip - rf->sym_start));
	else
		t = srcbuf_add(b, "%s[%llx]", rf->dso ? rf->dso : "[unknown]",
			       (unsigned long long)rf->map_ip);
	return t ? t : "??:0";
}

/* perf's srcfile of a record: its file's base name, or with --full-source-path its path as
 * binutils gives it (a relative one under its compilation's directory); "" without one. */
static const char *record_srcfile(struct srcbuf *b, const struct inline_frame *in)
{
	const char *p;

	if (!in->file)
		return "";
	if (!b->full_path)
		return base_name(in->file);
	if (!in->dir)
		return in->file;
	p = srcbuf_add(b, "%s/%s", in->dir, in->file);
	return p ? p : "";
}

/* perf's srcline of a record: its srcfile and line. */
static const char *record_srcline(struct srcbuf *b, const struct inline_frame *in)
{
	const char *p = in->file ? srcbuf_add(b, "%s:%u", record_srcfile(b, in), in->line) : NULL;

	return p ? p : "??:0";
}

static const char *short_dso(const struct unwind_frame *f)
{
	const char *name, *slash;

	if (!f->dso)
		return NULL;
	name = dso__name(f->dso);
	if (!name)
		return NULL;
	if (name[0] == '[')
		return name;
	slash = strrchr(name, '/');
	return slash ? slash + 1 : name;
}

/* Frame o's srcline and srcfile as the sort keys ask (nothing without h->sb): from its record
 * in (NULL: none, perf's fallbacks). f is the frame o is made of. */
static void set_src(const struct frames_how *h, struct report_frame *o,
		    const struct unwind_frame *f, const struct inline_frame *in)
{
	if (!h->sb)
		return;
	if (h->srclines)
		o->srcline = in ? record_srcline(h->sb, in) : plain_srcline(h->sb, f, o);
	if (h->srcfiles)
		o->srcfile = in ? record_srcfile(h->sb, in) : "";
}

/* The name a frame's symbol is shown by: demangled as perf shows it, or as the file spells it
 * (perf's --no-demangle, ELF version included). */
static const char *frame_name(const struct unwind_frame *f, bool mangled)
{
	return mangled && f->sym ? f->sym->name : unwind_frame__name(f);
}

static void convert(const struct unwind_frame *f, bool mangled, struct report_frame *out)
{
	/* perf stores a DWARF-unwound caller at its return address - 1, and shows that address
	 * when no symbol holds it. */
	uint64_t adj = f->caller ? 1 : 0;

	*out = (struct report_frame){
		.ip = f->ip - adj,
		.map_ip = f->addr - adj,
		.map_off = dso__file_offset(f->dso, f->addr - adj),
		.sym_start = f->sym ? f->sym->start : 0,
		.dso = short_dso(f),
		.dso_seq = f->dso ? dso__seq(f->dso) : 0,
		.sym = frame_name(f, mangled),
		.kernel = f->kernel,
	};
}

/* Appends frame f's report frames to out[*n..max): its inline records when h->expand (and
 * there are some), else itself; with srclines from the records (or perf's fallbacks) into
 * h->sb when there is one. */
static void emit(const struct frames_how *h, const struct unwind_frame *f,
		 const struct inline_frame *in, int nr, struct report_frame *out, size_t *n,
		 size_t max)
{
	struct report_frame base;

	if (*n >= max)
		return;
	convert(f, h->mangled, &base);
	if (nr <= 0 || !h->expand || !f->unwound) {	/* no DWARF there, --no-inline, a recorded
							 * chain's: the frame as it is */
		set_src(h, &base, f, nr > 0 ? &in[0] : NULL);
		out[(*n)++] = base;
		return;
	}
	/* perf's append_inlines(): the records replace the frame, innermost first; a record
	 * named like the symbol is the symbol itself. perf's fake inline symbol starts where
	 * the symbol does: rows of one inlined name stay apart per function it is inlined in. */
	for (int i = 0; i < nr && *n < max; i++) {
		struct report_frame *o = &out[(*n)++];
		/* perf compares the names it shows: mangled ones with --no-demangle */
		bool inlined = !h->mangled ? in[i].inlined : !f->sym || strcmp(in[i].raw, f->sym->name);

		*o = base;
		if (inlined)
			o->sym = h->mangled ? in[i].raw : in[i].name;
		o->inlined = inlined;
		o->expanded = true;
		set_src(h, o, f, &in[i]);
	}
}

/* Converts a session sample's frames (at most max) into out, as the report names them: callers
 * at their return address - 1, dsos by their short name; with h->expand, each frame of a
 * user-space symbol whose DWARF covers it becomes the frames perf makes of its address
 * (addr2line's records, innermost first, each "expanded", the ones not named like the symbol
 * "inlined"). Strings point into the machine's dsos and symbols (and h->sb). *ret_self (may be
 * NULL) gets the leaf as it is: perf's sample symbol, the Self row. Called in sample order from
 * one thread, with the order the chain is shown in: addr2line's names depend on the order it is
 * asked in, and perf asks in that order. Returns the number written. */
static size_t frames_of(const struct frames_how *h, const struct report_session_sample *s,
			struct report_frame *out, size_t max, struct report_frame *ret_self)
{
	size_t n = 0;
	struct inline_frame copy[MAX_FRAMES];
	int nrs[MAX_FRAMES];
	size_t used = 0, nf = s->nr_frames < MAX_FRAMES ? s->nr_frames : MAX_FRAMES;
	size_t first[MAX_FRAMES];

	if (h->sb)
		h->sb->used = 0;
	if (nf && s->frames[0].off_chain) {
		/* the sampled ip is the Self row's, the chain the rest, which may be empty (perf) */
		struct report_session_sample rest = *s;

		rest.frames++;
		rest.nr_frames--;
		n = frames_of(h, &rest, out, max, NULL);
		if (ret_self) {
			convert(&s->frames[0], h->mangled, ret_self);
			set_src(h, ret_self, &s->frames[0], NULL);
		}
		return n;
	}
	if (h->order == REPORT_INLINE_NONE || s->filtered) {
		for (size_t k = 0; k < nf; k++)
			emit(h, &s->frames[k], NULL, 0, out, &n, max);
		if (ret_self && nf)
			convert(&s->frames[0], h->mangled, ret_self);
		return n;
	}
	/* perf resolves a caller-ordered chain from the root, and addr2line's answers depend
	 * on the order it is asked in: ask in perf's order, keep copies (an answer is valid
	 * only until the next question), then lay the frames out leaf first. */
	for (size_t j = 0; j < nf; j++) {
		size_t k = h->order == REPORT_INLINE_ROOT_FIRST ? nf - 1 - j : j;
		const struct unwind_frame *f = &s->frames[k];
		const struct inline_frame *in = NULL;
		uint64_t addr = f->addr - (f->caller ? 1 : 0);
		/* a recorded chain's frames: their lines, never their inlined functions */
		int nr = f->unwound ? unwind_frame__inlines(f, addr, &in) :
			 h->sb ? unwind_frame__lines(f, addr, &in) : 0;

		if (nr > 0 && used + (size_t)nr > MAX_FRAMES)
			nr = 0;
		nrs[k] = nr;
		first[k] = used;
		if (nr > 0) {
			memcpy(copy + used, in, (size_t)nr * sizeof(*in));
			used += (size_t)nr;
		}
	}
	for (size_t k = 0; k < nf; k++)
		emit(h, &s->frames[k], copy + first[k], nrs[k], out, &n, max);
	if (ret_self && nf) {
		convert(&s->frames[0], h->mangled, ret_self);
		set_src(h, ret_self, &s->frames[0], nrs[0] > 0 ? &copy[first[0]] : NULL);
	}
	return n;
}

static uint64_t chain_hash(const struct report_session_sample *s)
{
	uint64_t h = s->attr * 0x9e3779b97f4a7c15ULL ^ s->nr_frames ^ ((uint64_t)s->filtered << 63);

	for (size_t i = 0; i < s->nr_frames; i++) {
		const struct unwind_frame *f = &s->frames[i];

		h = (h ^ f->ip ^ ((uint64_t)f->caller << 62) ^ ((uint64_t)f->kernel << 61) ^
		     ((uint64_t)f->unwound << 60) ^ ((uint64_t)f->off_chain << 59)) *
		    0xff51afd7ed558ccdULL;
		h ^= (uintptr_t)f->dso ^ ((uintptr_t)f->sym << 7) ^ f->addr;
		h ^= h >> 29;
	}
	return h;
}

static bool frames_eq(const struct unwind_frame *a, const struct unwind_frame *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].ip != b[i].ip || a[i].addr != b[i].addr || a[i].dso != b[i].dso ||
		    a[i].sym != b[i].sym || a[i].kernel != b[i].kernel || a[i].caller != b[i].caller ||
		    a[i].unwound != b[i].unwound || a[i].off_chain != b[i].off_chain)
			return false;
	return true;
}

/* The memo entry for s's frames: *hit when it holds them, else emptied for them (chain not
 * known); NULL when there is no room for a copy (the sample goes the long way). */
static struct chain_memo *chain_memo(struct report_set *rs, const struct report_session_sample *s,
				     bool *hit)
{
	uint64_t h = chain_hash(s);
	struct chain_memo *m = &rs->memo[(h >> 20) % CHAIN_MEMO];

	*hit = m->chain.known && m->hash == h && m->attr == s->attr && m->nr == s->nr_frames &&
	       m->filtered == s->filtered && frames_eq(m->frames, s->frames, s->nr_frames);
	if (*hit)
		return m;
	if (m->cap < s->nr_frames) {
		struct unwind_frame *p = realloc(m->frames, s->nr_frames * sizeof(*p));

		if (!p) {
			m->chain.known = false;
			return NULL;
		}
		m->frames = p;
		m->cap = s->nr_frames;
	}
	memcpy(m->frames, s->frames, s->nr_frames * sizeof(*s->frames));
	m->hash = h;
	m->attr = s->attr;
	m->nr = s->nr_frames;
	m->filtered = s->filtered;
	m->chain.known = false;
	return m;
}

/* perf's --dsos and --symbols judge the sample's own ip (the frame its Self row comes from,
 * before inlined functions are expanded): its DSO by short name or path, its symbol by name. A
 * sample without a frame there has neither. */
static bool location_filtered(const struct report_set *rs, const struct report_session_sample *s)
{
	const struct unwind_frame *f = s->nr_frames ? &s->frames[0] : NULL;

	if (rs->dsos) {
		const char *path = f && f->dso ? dso__name(f->dso) : NULL;

		if (!path || !(report__name_listed(rs->dsos, rs->nr_dsos, short_dso(f)) ||
			       report__name_listed(rs->dsos, rs->nr_dsos, path)))
			return true;
	}
	return rs->symbols && !(f && f->sym && report__name_listed(rs->symbols, rs->nr_symbols,
								      frame_name(f, rs->how.mangled)));
}

static bool answer_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct name_regex *x = ctx;

	return x->answers[id].name == key;
}

/* Whether name matches x's regex (1, else 0; -ENOMEM). */
static int name_match(struct name_regex *x, const char *name)
{
	uint32_t h = (uint32_t)rep_mix64((uintptr_t)name);
	struct slot *sl;

	if (rep_htab_reserve(&x->ht) < 0)
		return -ENOMEM;
	sl = rep_htab_probe(&x->ht, h, answer_eq, x, name);
	if (sl->id1)
		return x->answers[sl->id1 - 1].match;
	if (rep_grow(&x->answers, &x->cap, x->nr, sizeof(*x->answers)) < 0)
		return -ENOMEM;
	x->answers[x->nr] = (struct name_answer){ name, regexec(&x->re, name, 0, NULL, 0) == 0 };
	rep_htab_set(&x->ht, sl, h, (uint32_t)x->nr);
	return x->answers[x->nr++].match;
}

/* The first of the n frames f (leaf first) whose name x matches, in the order perf walks a
 * chain: from the root in caller order, else from the leaf; frame skip (n: none) is not looked
 * at. *at gets its index (n: none). Returns 0 or -ENOMEM. */
static int first_match(struct name_regex *x, bool from_root, const struct report_frame *f,
		       size_t n, size_t skip, size_t *at)
{
	*at = n;
	for (size_t j = 0; j < n; j++) {
		size_t k = from_root ? n - 1 - j : j;
		int m = f[k].sym && k != skip ? name_match(x, f[k].sym) : 0;

		if (m < 0)
			return m;
		if (m) {
			*at = k;
			return 0;
		}
	}
	return 0;
}

static int compile(struct name_regex *x, const char *re)
{
	if (regcomp(&x->re, re, REG_EXTENDED | REG_NOSUB))
		return -EINVAL;
	x->on = true;
	return 0;
}

static void name_regex_free(struct name_regex *x)
{
	if (x->on)
		regfree(&x->re);
	free(x->answers);
	free(x->ht.slots);
}

static int add_sample(void *ctx, const struct report_session_sample *s)
{
	struct report_set *rs = ctx;
	struct report_frame self;
	bool hit = false;
	struct chain_memo *m = s->nr_frames ? chain_memo(rs, s, &hit) : NULL;
	struct report_sample sample = {
		.comm = s->comm,
		.cgroup = s->cgroup,
		/* (a function of the frames: the memo's chain stays right) */
		.filtered = s->filtered || ((rs->dsos || rs->symbols) &&
					    location_filtered(rs, s)),
		.pid = (int32_t)s->raw->pid,
		.tid = (int32_t)s->raw->tid,
		.thread = s->thread,
		.cpu = s->cpu,
		.period = s->period,
		.time = s->raw->time,
		.frames = rs->frames,
		.chain = m ? &m->chain : NULL,
	};

	if (s->attr >= rs->nr)
		return 0;
	if (hit) {
		rs->memo_hits++;
		sample.nr_frames = 1;   /* not read: the chain is known */
		sample.frames = NULL;
		sample.parent = m->parent;
		return report__add_sample(rs->reports[s->attr], &sample) < 0 ? -ENOMEM : 0;
	}
	sample.nr_frames = frames_of(&rs->how, s, rs->frames, MAX_FRAMES, &self);
	if (rs->how.expand || rs->how.sb || s->frames[0].off_chain)
		sample.self = &self;
	size_t parent_at = sample.nr_frames;

	if (rs->parent.on) {
		if (first_match(&rs->parent, rs->caller, rs->frames, sample.nr_frames,
				sample.nr_frames, &parent_at) < 0)
			return -ENOMEM;
		sample.parent = parent_at < sample.nr_frames ? rs->frames[parent_at].sym : NULL;
		if (m)
			m->parent = sample.parent;
	}
	/* perf's --ignore-callees: the frames under the outermost function that matches are
	 * left out, and the sample counts as that function's; the parent's frame is not one
	 * (perf tests it for the parent, else for the callees) */
	if (rs->ignore.on) {
		size_t at;

		if (first_match(&rs->ignore, true, rs->frames, sample.nr_frames, parent_at, &at) < 0)
			return -ENOMEM;
		if (at < sample.nr_frames) {
			self = rs->frames[at];
			sample.frames += at;
			sample.nr_frames -= at;
			sample.self = &self;
		}
	}
	return report__add_sample(rs->reports[s->attr], &sample) < 0 ? -ENOMEM : 0;
}

static const char *session_comm(void *ctx, int32_t tid, uint32_t thread)
{
	return report_session__comm(ctx, tid, thread);
}

/* After the pass: the threads' last names, for perf's pid column. */
static int finish(void *ctx, struct report_session *s)
{
	struct report_set *rs = ctx;

	for (size_t i = 0; i < rs->nr; i++) {
		int err = report__final_comms(rs->reports[i], session_comm, s);

		if (err)
			return err;
	}
	return 0;
}

struct report_set *report_set__new(struct report_session *s, const struct report_opts *opts,
				   bool children_set)
{
	struct perf_reader *r = report_session__reader(s);
	struct report_opts def = { .min_percent = -1, .graph = REPORT_GRAPH_GRAPH };
	struct report_set *rs = calloc(1, sizeof(*rs));
	struct report_sink sink = { .sample = add_sample, .finish = finish, .ctx = rs };

	if (!rs)
		return NULL;
	rs->nr = perf_reader__nr_attrs(r) ? perf_reader__nr_attrs(r) : 1;
	/* A pipe-mode stream: perf 6.1 has no Children column for one (it learns that the events
	 * have call chains only after its report is set up, whatever the options), but its call
	 * graphs keep the caller order that goes with children. preport's default is the same;
	 * --children still gives the column. */
	if (opts && !children_set && (perf_reader__warnings(r) & PERF_READER_W_PIPE)) {
		def = *opts;
		if (def.order == REPORT_ORDER_DEFAULT && !def.no_children)
			def.order = REPORT_ORDER_CALLER;
		def.no_children = true;
		opts = &def;
	}
	{
		const struct report_opts *o = opts ? opts : &def;
		bool caller = o->order == REPORT_ORDER_CALLER ||
			      (o->order == REPORT_ORDER_DEFAULT && !o->no_children);

		bool srclines = report__wants_key(o, REPORT_SORT_SRCLINE);
		bool srcfiles = report__wants_key(o, REPORT_SORT_SRCFILE);

		/* with srclines, --no-inline still asks the DWARF (for lines, expanding nothing) */
		rs->how = (struct frames_how){
			.order = !o->no_inline ? (caller ? REPORT_INLINE_ROOT_FIRST :
							   REPORT_INLINE_LEAF_FIRST) :
				 srclines || srcfiles ? REPORT_INLINE_LEAF_FIRST : REPORT_INLINE_NONE,
			.expand = !o->no_inline,
			.mangled = o->no_demangle,
			.sb = srclines || srcfiles ? &rs->sb : NULL,
			.srclines = srclines,
			.srcfiles = srcfiles,
		};
		rs->caller = caller;
		/* perf's default parent pattern, for a parent key without -p; none for a parent
		 * column of -F's alone (perf's parent is then always [other]) */
		if ((o->ignore_callees && compile(&rs->ignore, o->ignore_callees) < 0) ||
		    ((o->parent || report__sorts_by(o, REPORT_SORT_PARENT)) &&
		     compile(&rs->parent, o->parent ? o->parent : "^sys_|^do_page_fault") < 0)) {
			report_set__free(rs);
			errno = EINVAL;
			return NULL;
		}
		rs->sb.full_path = o->full_source_path;
		rs->dsos = o->dsos;
		rs->nr_dsos = o->nr_dsos;
		rs->symbols = o->symbols;
		rs->nr_symbols = o->nr_symbols;
	}
	rs->reports = calloc(rs->nr, sizeof(*rs->reports));
	if (!rs->reports)
		goto fail;
	for (size_t i = 0; i < rs->nr; i++) {
		struct report_opts o = opts ? *opts : def;
		const struct perf_reader_attr *a = perf_reader__attr(r, i);

		/* no call graph recorded: no graph to print */
		if (a && !(a->attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER))) {
			o.graph = REPORT_GRAPH_NONE;
			if (!children_set) {
				/* and a "+" list's Children column goes too (perf's
				 * perf_hpp__cancel_cumulate; a list of its own keeps it, N/A) */
				size_t n = 0;

				o.no_children = true;
				for (size_t k = 0; k < o.nr_fields; k++)
					if (!o.fields_append ||
					    o.fields[k].kind != REPORT_FIELD_CHILDREN)
						o.fields[n++] = o.fields[k];
				o.nr_fields = n;
			}
		}
		rs->reports[i] = report__new(&o);
		if (!rs->reports[i])
			goto fail;
	}
	if (report_session__add_sink(s, &sink) < 0) {
		errno = ENOMEM;
		goto fail;
	}
	return rs;
fail:
	{
		int e = errno;

		report_set__free(rs);
		errno = e;
	}
	return NULL;
}

size_t report_set__nr(const struct report_set *rs)
{
	return rs->nr;
}

struct report *report_set__report(struct report_set *rs, size_t idx)
{
	return idx < rs->nr ? rs->reports[idx] : NULL;
}

void report_set__free(struct report_set *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; rs->reports && i < rs->nr; i++)
		report__free(rs->reports[i]);
	for (size_t i = 0; i < CHAIN_MEMO; i++)
		free(rs->memo[i].frames);
	name_regex_free(&rs->ignore);
	name_regex_free(&rs->parent);
	free(rs->reports);
	free(rs);
}
