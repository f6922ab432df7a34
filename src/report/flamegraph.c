/* SVG flame graphs. Stacks are merged into a tree whose nodes are keyed by (parent, interned
 * name); writing lays children out in name order and colours each frame from a hash of its
 * name, so the same stacks always give byte-identical files. The embedded script works on
 * data-x/data-w/data-d attributes (position and width in samples, depth) and never needs the
 * network. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/flamegraph.h"

#define NONE UINT32_MAX
#define FRAME_H 16
#define FONT_SIZE 12
#define FONT_WIDTH 0.59   /* average glyph width in font sizes, monospace */
#define XPAD 10
#define MIN_WIDTH 0.1     /* pixels; narrower frames are left out, like flamegraph.pl */

struct fnode {
	const char *name;
	uint32_t parent, first_child, next_sibling;
	uint64_t count;
};

struct fslot {
	uint64_t hash;
	uint32_t id1;
};

struct flamegraph {
	struct fnode *nodes;
	size_t nr, cap;
	struct fslot *slots;     /* (parent, name) -> node */
	size_t mask;
	char **names;            /* interned copies */
	size_t nr_names, cap_names;
	struct fslot *name_slots;
	size_t name_mask;
};

static uint64_t hash_bytes(const char *s, uint64_t seed)
{
	uint64_t h = 1469598103934665603ULL ^ seed;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

struct flamegraph *flamegraph__new(void)
{
	struct flamegraph *fg = calloc(1, sizeof(*fg));
	if (!fg)
		return NULL;
	fg->cap = 64;
	fg->nodes = malloc(fg->cap * sizeof(*fg->nodes));
	fg->mask = 127;
	fg->slots = calloc(fg->mask + 1, sizeof(*fg->slots));
	fg->name_mask = 127;
	fg->name_slots = calloc(fg->name_mask + 1, sizeof(*fg->name_slots));
	if (!fg->nodes || !fg->slots || !fg->name_slots) {
		flamegraph__free(fg);
		errno = ENOMEM;
		return NULL;
	}
	fg->nodes[0] = (struct fnode){ .name = "all", .parent = NONE, .first_child = NONE,
				       .next_sibling = NONE };
	fg->nr = 1;
	return fg;
}

void flamegraph__free(struct flamegraph *fg)
{
	if (!fg)
		return;
	for (size_t i = 0; i < fg->nr_names; i++)
		free(fg->names[i]);
	free(fg->names);
	free(fg->name_slots);
	free(fg->nodes);
	free(fg->slots);
	free(fg);
}

/* Double a table of (hash, id + 1) slots. */
static int rehash(struct fslot **slots, size_t *mask)
{
	size_t cap = (*mask + 1) * 2;
	struct fslot *ns = calloc(cap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i <= *mask; i++) {
		if (!(*slots)[i].id1)
			continue;
		size_t j = (*slots)[i].hash & (cap - 1);
		while (ns[j].id1)
			j = (j + 1) & (cap - 1);
		ns[j] = (*slots)[i];
	}
	free(*slots);
	*slots = ns;
	*mask = cap - 1;
	return 0;
}

static const char *intern(struct flamegraph *fg, const char *s)
{
	if ((fg->nr_names + 1) * 2 > fg->name_mask + 1 &&
	    rehash(&fg->name_slots, &fg->name_mask) < 0)
		return NULL;
	uint64_t h = hash_bytes(s, 0);
	size_t j = h & fg->name_mask;
	while (fg->name_slots[j].id1) {
		const char *n = fg->names[fg->name_slots[j].id1 - 1];
		if (fg->name_slots[j].hash == h && !strcmp(n, s))
			return n;
		j = (j + 1) & fg->name_mask;
	}
	if (fg->nr_names == fg->cap_names) {
		size_t nc = fg->cap_names ? fg->cap_names * 2 : 64;
		char **p = realloc(fg->names, nc * sizeof(*p));
		if (!p)
			return NULL;
		fg->names = p;
		fg->cap_names = nc;
	}
	char *copy = strdup(s);
	if (!copy)
		return NULL;
	fg->names[fg->nr_names++] = copy;
	fg->name_slots[j] = (struct fslot){ h, fg->nr_names };
	return copy;
}

static int child(struct flamegraph *fg, uint32_t parent, const char *name, uint32_t *ret)
{
	if ((fg->nr + 1) * 2 > fg->mask + 1 && rehash(&fg->slots, &fg->mask) < 0)
		return -ENOMEM;
	/* Interned names compare by pointer. */
	uint64_t h = ((uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ULL) ^ (parent * 0xff51afd7ed558ccdULL);
	h ^= h >> 29;
	size_t j = h & fg->mask;
	while (fg->slots[j].id1) {
		const struct fnode *n = &fg->nodes[fg->slots[j].id1 - 1];
		if (fg->slots[j].hash == h && n->parent == parent && n->name == name) {
			*ret = fg->slots[j].id1 - 1;
			return 0;
		}
		j = (j + 1) & fg->mask;
	}
	if (fg->nr == fg->cap) {
		struct fnode *p = realloc(fg->nodes, fg->cap * 2 * sizeof(*p));
		if (!p)
			return -ENOMEM;
		fg->nodes = p;
		fg->cap *= 2;
	}
	uint32_t id = fg->nr++;
	fg->nodes[id] = (struct fnode){ .name = name, .parent = parent, .first_child = NONE,
					.next_sibling = fg->nodes[parent].first_child };
	fg->nodes[parent].first_child = id;
	fg->slots[j] = (struct fslot){ h, id + 1 };
	*ret = id;
	return 0;
}

int flamegraph__add(struct flamegraph *fg, const char *const *names, size_t nr, uint64_t count)
{
	uint32_t path[nr ? nr : 1];
	uint32_t cur = 0;

	if (!nr)
		return -EINVAL;
	/* Resolve the whole path first so that a failure leaves the counts untouched (nodes
	 * created on the way keep a zero count and are never drawn). */
	for (size_t i = 0; i < nr; i++) {
		const char *n = intern(fg, names[i]);
		if (!n || child(fg, cur, n, &cur) < 0)
			return -ENOMEM;
		path[i] = cur;
	}
	fg->nodes[0].count += count;
	for (size_t i = 0; i < nr; i++)
		fg->nodes[path[i]].count += count;
	return 0;
}

/* ---- writing ------------------------------------------------------------------------------ */

/* XML-escape s; bytes that are not valid UTF-8, and control characters, become '?'. */
static void put_escaped(FILE *fp, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	while (*p && n < max) {
		unsigned char c = *p;
		size_t len = 1;
		if (c >= 0x80) {
			len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
			bool ok = len != 0 && !(c == 0xc0 || c == 0xc1);
			for (size_t i = 1; ok && i < len; i++)
				ok = (p[i] & 0xc0) == 0x80;
			if (!ok) {
				fputc('?', fp);
				p++;
				n++;
				continue;
			}
			fwrite(p, 1, len, fp);
			p += len;
			n++;
			continue;
		}
		switch (c) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		case '\'': fputs("&apos;", fp); break;
		default:
			fputc(c < 0x20 ? '?' : c, fp);
		}
		p++;
		n++;
	}
}

/* Length in characters (UTF-8 lead bytes) of s. */
static size_t ulen(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* flamegraph.pl's "hot" palette: red to yellow, picked by hashes of the name. */
static void colour(const char *name, unsigned int *r, unsigned int *g, unsigned int *b)
{
	uint64_t h = hash_bytes(name, 0);
	double v1 = (double)(h & 0xffff) / 65535.0;
	double v2 = (double)((h >> 16) & 0xffff) / 65535.0;
	double v3 = (double)((h >> 32) & 0xffff) / 65535.0;
	*r = 205 + (unsigned int)(50 * v3);
	*g = (unsigned int)(230 * v1);
	*b = (unsigned int)(55 * v2);
}

struct wctx {
	const struct flamegraph *fg;
	FILE *fp;
	const char *unit;
	double scale;           /* pixels per count */
	unsigned int height;
	uint32_t *kids;         /* scratch for sorting */
};

static int name_cmp(const void *a, const void *b, void *c)
{
	const struct flamegraph *fg = c;
	const struct fnode *x = &fg->nodes[*(const uint32_t *)a];
	const struct fnode *y = &fg->nodes[*(const uint32_t *)b];
	return strcmp(x->name, y->name);
}

static unsigned int max_depth(const struct flamegraph *fg, uint32_t n, unsigned int d)
{
	unsigned int m = d;
	for (uint32_t c = fg->nodes[n].first_child; c != NONE; c = fg->nodes[c].next_sibling) {
		unsigned int cd = max_depth(fg, c, d + 1);
		if (cd > m)
			m = cd;
	}
	return m;
}

static int write_node(struct wctx *w, uint32_t id, uint64_t x, unsigned int depth)
{
	const struct flamegraph *fg = w->fg;
	const struct fnode *n = &fg->nodes[id];
	double width = (double)n->count * w->scale;

	if (!n->count || width < MIN_WIDTH)
		return 0;
	double px = XPAD + (double)x * w->scale;
	double py = w->height - 2 * FONT_SIZE - 10 - (double)(depth + 1) * FRAME_H;
	double share = fg->nodes[0].count ? 100.0 * n->count / fg->nodes[0].count : 0;
	unsigned int r, g, b;
	colour(n->name, &r, &g, &b);

	fprintf(w->fp, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\" data-d=\"%u\">",
		x, n->count, depth);
	fputs("<title>", w->fp);
	put_escaped(w->fp, n->name, SIZE_MAX);
	fprintf(w->fp, " (%" PRIu64 " %s, %.2f%%)</title>", n->count, w->unit, share);
	fprintf(w->fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>", px, py, width, FRAME_H - 1, r, g, b);
	/* The label as the script would fit it: whole, cut with "..", or nothing. */
	size_t fit = width > 6 ? (size_t)((width - 6) / (FONT_SIZE * FONT_WIDTH)) : 0;
	size_t len = ulen(n->name);
	fprintf(w->fp, "<text x=\"%.1f\" y=\"%.1f\">", px + 3, py + FRAME_H - 5);
	if (fit >= 3) {
		put_escaped(w->fp, n->name, len <= fit ? len : fit - 2);
		if (len > fit)
			fputs("..", w->fp);
	}
	fputs("</text></g>\n", w->fp);

	size_t nk = 0;
	for (uint32_t c = n->first_child; c != NONE; c = fg->nodes[c].next_sibling)
		nk++;
	if (!nk)
		return 0;
	uint32_t *kids = malloc(nk * sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	nk = 0;
	for (uint32_t c = n->first_child; c != NONE; c = fg->nodes[c].next_sibling)
		kids[nk++] = c;
	qsort_r(kids, nk, sizeof(*kids), name_cmp, (void *)fg);
	int err = 0;
	for (size_t i = 0; i < nk && !err; i++) {
		err = write_node(w, kids[i], x, depth + 1);
		x += fg->nodes[kids[i]].count;
	}
	free(kids);
	return err;
}

/* The viewer: hover shows a frame's title in the details line, click zooms into it (ancestors
 * stretch to full width and fade, unrelated frames hide), "Reset Zoom" or a click on the root
 * undoes it, "Search" highlights frames matching a regular expression and prints the share
 * they cover (nested matches counted once). */
static const char script[] =
"\"use strict\";\n"
"var W, PAD = 10, FW = 12 * 0.59, nodes = [], details, matched, resetbtn, searchbtn;\n"
"var zoomed = null, searching = null;\n"
"function init(evt) {\n"
"  var svg = document.documentElement;\n"
"  W = +svg.getAttribute('width');\n"
"  details = document.getElementById('details').firstChild;\n"
"  matched = document.getElementById('matched').firstChild;\n"
"  resetbtn = document.getElementById('reset');\n"
"  searchbtn = document.getElementById('search');\n"
"  var gs = document.getElementById('frames').getElementsByTagName('g');\n"
"  for (var i = 0; i < gs.length; i++) {\n"
"    var g = gs[i], t = g.getElementsByTagName('title')[0].textContent;\n"
"    var r = g.getElementsByTagName('rect')[0];\n"
"    nodes.push({ g: g, x: +g.getAttribute('data-x'), w: +g.getAttribute('data-w'),\n"
"      d: +g.getAttribute('data-d'), r: r, t: g.getElementsByTagName('text')[0],\n"
"      info: t, name: t.replace(/ \\([^()]*\\)$/, ''), fill: r.getAttribute('fill') });\n"
"    g.setAttribute('data-i', i);\n"
"  }\n"
"  var fr = document.getElementById('frames');\n"
"  fr.addEventListener('mouseover', function (e) { var n = find(e); if (n) details.nodeValue = n.info; });\n"
"  fr.addEventListener('mouseout', function (e) { details.nodeValue = ' '; });\n"
"  fr.addEventListener('click', function (e) { var n = find(e); if (n) zoom(n); });\n"
"  resetbtn.addEventListener('click', function () { zoom(nodes[0]); });\n"
"  searchbtn.addEventListener('click', function () { search(); });\n"
"}\n"
"function find(e) {\n"
"  for (var el = e.target; el && el.getAttribute; el = el.parentNode)\n"
"    if (el.hasAttribute('data-i')) return nodes[+el.getAttribute('data-i')];\n"
"  return null;\n"
"}\n"
"function label(n, width) {\n"
"  var fit = width > 6 ? Math.floor((width - 6) / FW) : 0, s = n.name;\n"
"  if (fit < 3) s = ''; else if (s.length > fit) s = s.substring(0, fit - 2) + '..';\n"
"  n.t.textContent = s;\n"
"}\n"
"function place(n, x, width) {\n"
"  n.r.setAttribute('x', x.toFixed(1)); n.r.setAttribute('width', width.toFixed(1));\n"
"  n.t.setAttribute('x', (x + 3).toFixed(1)); label(n, width);\n"
"}\n"
"function zoom(z) {\n"
"  var span = W - 2 * PAD, root = nodes[0];\n"
"  zoomed = z === root ? null : z;\n"
"  resetbtn.style.opacity = zoomed ? 1 : 0;\n"
"  for (var i = 0; i < nodes.length; i++) {\n"
"    var n = nodes[i], inside = n.x >= z.x && n.x + n.w <= z.x + z.w;\n"
"    n.g.style.opacity = 1;\n"
"    if (n.d < z.d && n.x <= z.x && n.x + n.w >= z.x + z.w) {\n"
"      n.g.style.display = ''; n.g.style.opacity = 0.5; place(n, PAD, span);\n"
"    } else if (n.d >= z.d && inside && z.w > 0) {\n"
"      n.g.style.display = '';\n"
"      place(n, PAD + (n.x - z.x) / z.w * span, n.w / z.w * span);\n"
"    } else {\n"
"      n.g.style.display = 'none';\n"
"    }\n"
"  }\n"
"}\n"
"function search() {\n"
"  if (searching !== null) { searching = null; paint(null); return; }\n"
"  var term = prompt('Search frames (regular expression)', '');\n"
"  if (!term) return;\n"
"  var re; try { re = new RegExp(term); } catch (err) { alert(err); return; }\n"
"  searching = re; paint(re);\n"
"}\n"
"function paint(re) {\n"
"  var hits = [];\n"
"  for (var i = 0; i < nodes.length; i++) {\n"
"    var n = nodes[i], on = re !== null && re.test(n.name);\n"
"    n.r.setAttribute('fill', on ? 'rgb(230,0,230)' : n.fill);\n"
"    if (on) hits.push(n);\n"
"  }\n"
"  hits.sort(function (a, b) { return a.x - b.x || b.w - a.w; });\n"
"  var covered = 0, end = -1;\n"
"  for (var j = 0; j < hits.length; j++) {\n"
"    var h = hits[j];\n"
"    if (h.x >= end) { covered += h.w; end = h.x + h.w; }\n"
"    else if (h.x + h.w > end) { covered += h.x + h.w - end; end = h.x + h.w; }\n"
"  }\n"
"  var total = nodes.length ? nodes[0].w : 0;\n"
"  searchbtn.firstChild.nodeValue = re ? 'Reset Search' : 'Search';\n"
"  matched.nodeValue = re && total ? 'Matched: ' + (100 * covered / total).toFixed(1) + '%' : ' ';\n"
"}\n";

int flamegraph__write(const struct flamegraph *fg, FILE *fp, const struct flamegraph_opts *opts)
{
	unsigned int width = opts && opts->width ? opts->width : 1200;
	const char *title = opts && opts->title ? opts->title : "Flame Graph";
	const char *unit = opts && opts->unit ? opts->unit : "samples";
	unsigned int depth = max_depth(fg, 0, 0);
	unsigned int height = 3 * FONT_SIZE + (depth + 1) * FRAME_H + 2 * FONT_SIZE + 10;
	struct wctx w = { .fg = fg, .fp = fp, .unit = unit, .height = height };

	w.scale = fg->nodes[0].count ? (double)(width - 2 * XPAD) / fg->nodes[0].count : 0;
	fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		width, height, width, height);
	fputs("<defs><linearGradient id=\"bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" "
	      "offset=\"95%\"/></linearGradient></defs>\n", fp);
	fprintf(fp, "<style type=\"text/css\">\n"
		"text { font-family: monospace; font-size: %dpx; fill: rgb(0,0,0); }\n"
		"#title { text-anchor: middle; font-size: 17px; }\n"
		"#search, #reset { cursor: pointer; }\n"
		"#reset { opacity: 0; }\n"
		".f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
		"</style>\n", FONT_SIZE);
	fprintf(fp, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", script);
	fprintf(fp, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"url(#bg)\"/>\n",
		width, height);
	fprintf(fp, "<text id=\"title\" x=\"%u\" y=\"%d\">", width / 2, 2 * FONT_SIZE);
	put_escaped(fp, title, SIZE_MAX);
	fputs("</text>\n", fp);
	fprintf(fp, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", XPAD, height - 8);
	fprintf(fp, "<text id=\"reset\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n", XPAD,
		2 * FONT_SIZE);
	fprintf(fp, "<text id=\"search\" x=\"%u\" y=\"%d\">Search</text>\n", width - XPAD - 100,
		2 * FONT_SIZE);
	fprintf(fp, "<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n", width - XPAD - 100,
		height - 8);
	fputs("<g id=\"frames\">\n", fp);
	int err = write_node(&w, 0, 0, 0);
	fputs("</g>\n</svg>\n", fp);
	if (err)
		return err;
	return ferror(fp) ? -EIO : 0;
}
