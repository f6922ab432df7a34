#!/bin/sh
# A file recorded without call chains (perf record without -g): perf report turns --children off,
# silently, even when asked for (no Children column, no inlined rows), and refuses a -g other
# than none with its message; preport does the same, but exits 2 where perf exits 0.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/inlines" ] || fail "the inlines workload is missing (make test-bins)"

perf record -q -e cpu-clock -o flat.data -- "$W/inlines" > /dev/null 2>&1 || fail "perf record failed"
compare_reports "no call chains" flat.data
for args in "" "--children" "--children -g none --sort sym"; do
	# shellcheck disable=SC2086
	perf report -i flat.data --stdio $args 2> /dev/null | grep '^# Overhead' > perf.hdr || true
	# shellcheck disable=SC2086
	preport -i flat.data $args 2> /dev/null | grep '^# Overhead' > preport.hdr || true
	[ -s perf.hdr ] || fail "perf report $args: no '# Overhead' header"
	cmp -s perf.hdr preport.hdr || { diff perf.hdr preport.hdr; fail "preport $args: the column header differs from perf's"; }
	! preport -i flat.data $args 2> /dev/null | grep -q '(inlined)' || fail "preport $args: inlined rows"
done

perf report -i flat.data --stdio -g caller > /dev/null 2> perf.err || true
grep -q "But no callchain or branch data" perf.err || fail "perf report -g caller did not refuse (perf.err: $(cat perf.err))"
st=0
preport -i flat.data -g caller > out.txt 2> err.txt || st=$?
assert_eq "$st" 2 "exit status of preport -g caller on a file without call chains"
grep -q "^preport: Selected -g or --branch-history\.$" err.txt || { cat err.txt; fail "no perf's message"; }
grep -q "^But no callchain or branch data\.$" err.txt || { cat err.txt; fail "no perf's message"; }
[ ! -s out.txt ] || fail "preport -g caller printed a report"
preport -i flat.data -g none > /dev/null 2>&1 || fail "preport -g none refused"
echo ok
