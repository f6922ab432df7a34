#!/bin/sh
# A report that reads only each sample's own ip (--no-children -g none, no parent, no
# --ignore-callees, no folded stacks, flame graph or pprof) unwinds nothing, as perf report
# does without call chains, and prints what the same report with every sample unwound prints:
# the DWARF recordings of perf and precord (inlined functions, source lines, a shared library),
# the sort keys that read the ip's DWARF, -U, a filter. The unwound side is forced by an
# --ignore-callees that matches no function (it leaves every chain whole).
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/inlines" ] && [ -x "$W/mixed" ] || fail "the workloads are missing (make test-bins)"

INLINES_CPU=1 perf record -q -e cpu-clock -F 2000 --call-graph dwarf -o perf.data -- "$W/inlines" 1 \
	> /dev/null 2>&1 || fail "perf record --call-graph dwarf failed"
precord -q -e cpu-clock -F 2000 -o precord.data -- "$W/mixed" 1 2 > /dev/null || fail "precord failed"

# unwinds FILE: the DWARF unwinds preport -v counted
unwinds() { sed -n 's/.*threads; \([0-9]*\) DWARF unwinds.*/\1/p' "$1"; }

for f in perf.data precord.data; do
	for v in "" "--sort dso,sym,srcline" "--sort sym,srcfile -n" "-U --sort sym" "--no-inline -F overhead,sym" \
		"--hierarchy --sort comm,sym" "--comm inlines,mixed --sort pid,sym"; do
		preport -v -i $f --no-children -g none $v > self.txt 2> self.err || fail "preport $v exit $?"
		preport -v -i $f --no-children -g none --ignore-callees '^no such function$' $v \
			> unw.txt 2> unw.err || fail "preport --ignore-callees $v exit $?"
		assert_eq "$(unwinds self.err)" 0 "$f $v: DWARF unwinds of a report without call chains"
		assert_ge "$(unwinds unw.err)" 500 "$f $v: DWARF unwinds with --ignore-callees"
		[ "$(grep -cE '^ +[0-9.]+%' self.txt)" -ge 3 ] || { cat self.txt; fail "$f $v: too few rows"; }
		cmp -s self.txt unw.txt || { diff self.txt unw.txt | head -n 20 >&2; fail "$f $v: differs from the unwound report"; }
	done
	echo "ok: $f: seven reports without call chains unwound nothing and printed the unwound reports' text"
done
# what needs the callers still unwinds
for v in "--children -g none" "--no-children -g caller" "--no-children -g none -p main" \
	"--no-children -g none --folded" "--no-children -g none -F sym,overhead_children"; do
	preport -v -i precord.data $v > /dev/null 2> o.err || fail "preport $v exit $?"
	assert_ge "$(unwinds o.err)" 500 "DWARF unwinds with $v"
done
echo "ok: children, graphs, -p, --folded and a Children field unwind"
