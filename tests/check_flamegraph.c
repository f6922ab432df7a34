/* Tests of src/report/flamegraph: the SVG is well-formed XML (checked by a small parser here, and by
 * xmllint when it is installed), names are escaped, frame widths follow the counts, and the
 * output does not depend on the order stacks were added. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/flamegraph.h"

static char *render(struct flamegraph *fg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(fp);
	struct flamegraph_opts o = { .title = "t <&> \"q\"" };
	ck_assert_int_eq(flamegraph__write(fg, fp, &o), 0);
	fclose(fp);
	return buf;
}

static void add(struct flamegraph *fg, const char *a, const char *b, const char *c, uint64_t n)
{
	const char *names[3] = { a, b, c };
	ck_assert_int_eq(flamegraph__add(fg, names, c ? 3 : b ? 2 : 1, n), 0);
}

/* A strict-enough XML well-formedness check: balanced and matching tags, quoted attributes,
 * only the five predefined entities or numeric ones, no '<' or raw '&' in text, CDATA and
 * comments skipped. Returns NULL when fine, else a description. */
static const char *xml_check(const char *s)
{
	static char err[128];
	const char *stack[256];
	size_t lens[256];
	int depth = 0;
	bool root_seen = false;

	if (!strncmp(s, "<?xml", 5)) {
		s = strstr(s, "?>");
		if (!s)
			return "bad declaration";
		s += 2;
	}
	while (*s) {
		if (*s == '<') {
			if (!strncmp(s, "<![CDATA[", 9)) {
				s = strstr(s, "]]>");
				if (!s)
					return "unterminated CDATA";
				s += 3;
				continue;
			}
			if (!strncmp(s, "<!--", 4)) {
				s = strstr(s, "-->");
				if (!s)
					return "unterminated comment";
				s += 3;
				continue;
			}
			bool closing = s[1] == '/';
			const char *name = s + 1 + closing;
			size_t nl = strcspn(name, " \t\n/>");
			if (!nl)
				return "empty tag name";
			const char *p = name + nl;
			if (closing) {
				if (*p != '>')
					return "junk in end tag";
				if (!depth || lens[depth - 1] != nl || strncmp(stack[depth - 1], name, nl))
					return "mismatched end tag";
				depth--;
				s = p + 1;
				continue;
			}
			/* attributes: name="value" */
			for (;;) {
				while (*p == ' ' || *p == '\n' || *p == '\t')
					p++;
				if (*p == '>' || (*p == '/' && p[1] == '>'))
					break;
				size_t an = strcspn(p, "=\" \t\n>");
				if (!an || p[an] != '=' || (p[an + 1] != '"' && p[an + 1] != '\''))
					return "unquoted attribute";
				char q = p[an + 1];
				const char *v = p + an + 2, *e = strchr(v, q);
				if (!e)
					return "unterminated attribute";
				for (const char *c = v; c < e; c++)
					if (*c == '<')
						return "'<' in attribute";
				p = e + 1;
			}
			if (*p == '/') {
				s = p + 2;
			} else {
				if (depth == 256)
					return "too deep";
				if (!depth && root_seen)
					return "two roots";
				root_seen = true;
				stack[depth] = name;
				lens[depth++] = nl;
				s = p + 1;
			}
			continue;
		}
		if (*s == '&') {
			static const char *const ents[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
			bool ok = s[1] == '#' && strchr(s, ';');
			for (size_t i = 0; i < 5 && !ok; i++)
				ok = !strncmp(s, ents[i], strlen(ents[i]));
			if (!ok) {
				snprintf(err, sizeof(err), "bad entity near %.20s", s);
				return err;
			}
		}
		if (*s == '>' && depth == 0)
			return "stray '>'";
		s++;
	}
	return depth ? "unclosed element" : root_seen ? NULL : "no root";
}

START_TEST(test_well_formed_and_escaped)
{
	struct flamegraph *fg = flamegraph__new();
	ck_assert_ptr_nonnull(fg);
	add(fg, "my prog", "main", "std::map<int, std::vector<char>>::operator[](int const&)", 3);
	add(fg, "my prog", "main", "a&b 'quoted' \"x\" \x01 \xff", 1);
	add(fg, "my prog", "main", NULL, 1);
	char *svg = render(fg);

	const char *err = xml_check(svg);
	ck_assert_msg(err == NULL, "not well-formed: %s", err);
	ck_assert_ptr_nonnull(strstr(svg, "std::map&lt;int, std::vector&lt;char&gt;&gt;::operator[]"
					  "(int const&amp;) (3 samples, 60.00%)</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "a&amp;b &apos;quoted&apos; &quot;x&quot; ? ?"));
	ck_assert_ptr_nonnull(strstr(svg, ">t &lt;&amp;&gt; &quot;q&quot;</text>"));
	ck_assert_ptr_null(strstr(svg, "<int"));
	/* The script must not end its CDATA section early. */
	const char *cdata = strstr(svg, "<![CDATA[");
	ck_assert_ptr_nonnull(cdata);
	ck_assert_ptr_eq(strstr(cdata, "]]>"), strstr(svg, "]]></script>"));

	/* xmllint agrees (libxml2-utils, in DEB_PKGS). */
	ck_assert_msg(system("command -v xmllint >/dev/null 2>&1") == 0,
		      "xmllint is missing: make deps installs it (libxml2-utils)");
	{
		char path[] = "/tmp/check_flamegraph_XXXXXX";
		int fd = mkstemp(path);
		ck_assert_int_ge(fd, 0);
		FILE *fp = fdopen(fd, "w");
		fputs(svg, fp);
		fclose(fp);
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "xmllint --noout %s 2>/dev/null", path);
		int rc = system(cmd);
		unlink(path);
		ck_assert_int_eq(rc, 0);
	}
	free(svg);
	flamegraph__free(fg);
}
END_TEST

/* The data-w and width attributes of the frame named name. */
static void frame_of(const char *svg, const char *name, unsigned long *ret_w, double *ret_px)
{
	char key[256];
	snprintf(key, sizeof(key), "<title>%s (", name);
	const char *t = strstr(svg, key);
	ck_assert_msg(t != NULL, "no frame %s", name);
	const char *g = t;
	while (g > svg && strncmp(g, "<g class=\"f\"", 12))
		g--;
	const char *dw = strstr(g, "data-w=\"");
	const char *w = strstr(t, "width=\"");
	ck_assert_ptr_nonnull(dw);
	ck_assert_ptr_nonnull(w);
	*ret_w = strtoul(dw + 8, NULL, 10);
	*ret_px = strtod(w + 7, NULL);
}

START_TEST(test_widths_proportional)
{
	struct flamegraph *fg = flamegraph__new();
	add(fg, "w", "main", "big", 300);
	add(fg, "w", "main", "small", 100);
	add(fg, "w", "other", NULL, 600);
	char *svg = render(fg);
	unsigned long nb, ns, nm, na;
	double pb, ps, pm, pa;
	frame_of(svg, "big", &nb, &pb);
	frame_of(svg, "small", &ns, &ps);
	frame_of(svg, "main", &nm, &pm);
	frame_of(svg, "all", &na, &pa);
	ck_assert_uint_eq(nb, 300);
	ck_assert_uint_eq(ns, 100);
	ck_assert_uint_eq(nm, 400);
	ck_assert_uint_eq(na, 1000);
	ck_assert(pa > 1000 && pa <= 1200);
	ck_assert_double_eq_tol(pb / ps, 3.0, 0.01);
	ck_assert_double_eq_tol(pm / pa, 0.4, 0.001);
	ck_assert_ptr_nonnull(strstr(svg, "<title>big (300 samples, 30.00%)</title>"));
	free(svg);
	flamegraph__free(fg);
}
END_TEST

START_TEST(test_deterministic)
{
	struct flamegraph *a = flamegraph__new(), *b = flamegraph__new();
	add(a, "w", "main", "x", 5);
	add(a, "w", "main", "y", 7);
	add(a, "z", "start", NULL, 2);
	add(a, "w", "main", "x", 1);
	/* Same stacks, other order and split differently. */
	add(b, "z", "start", NULL, 2);
	add(b, "w", "main", "x", 6);
	add(b, "w", "main", "y", 7);
	char *sa = render(a), *sb = render(b);
	ck_assert_str_eq(sa, sb);
	/* Colours come from the name alone: both "main" frames of another graph match. */
	const char *m = strstr(sa, "<title>main (");
	ck_assert_ptr_nonnull(m);
	char fill[32];
	ck_assert_int_eq(sscanf(strstr(m, "fill=\""), "fill=\"%31[^\"]", fill), 1);
	ck_assert_str_ne(fill, "");
	free(sa);
	free(sb);
	flamegraph__free(a);
	flamegraph__free(b);
}
END_TEST

START_TEST(test_errors_and_empty)
{
	struct flamegraph *fg = flamegraph__new();
	ck_assert_int_eq(flamegraph__add(fg, NULL, 0, 1), -EINVAL);
	char *svg = render(fg);
	const char *err = xml_check(svg);
	ck_assert_msg(err == NULL, "empty graph not well-formed: %s", err);
	ck_assert_ptr_null(strstr(svg, "class=\"f\""));
	free(svg);
	flamegraph__free(fg);
	flamegraph__free(NULL);
	/* The checker itself catches breakage. */
	ck_assert_ptr_nonnull(xml_check("<a><b></a></b>"));
	ck_assert_ptr_nonnull(xml_check("<a x=1/>"));
	ck_assert_ptr_nonnull(xml_check("<a>x & y</a>"));
	ck_assert_ptr_null(xml_check("<a x=\"1\"><![CDATA[ < & ]]></a>"));
}
END_TEST

Suite *flamegraph_suite(void)
{
	Suite *s = suite_create("flamegraph");
	TCase *tc = tcase_create("svg");
	tcase_add_test(tc, test_well_formed_and_escaped);
	tcase_add_test(tc, test_widths_proportional);
	tcase_add_test(tc, test_deterministic);
	tcase_add_test(tc, test_errors_and_empty);
	suite_add_tcase(s, tc);
	return s;
}
