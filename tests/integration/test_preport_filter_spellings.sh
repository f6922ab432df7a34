#!/bin/sh
# perf report 6.1's spellings of the filters, -c/--comms, --pid, --tid, -C/--cpu (with ranges),
# select what they select in perf; -C on a file without PERF_SAMPLE_CPU is refused, as perf
# refuses it (preport with exit status 2, perf with 0).
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/yield_storm" ] || fail "the yield_storm workload is missing (make test-bins)"

perf record -q -e cpu-clock -a -o all.data -- "$W/yield_storm" 20000 2 > /dev/null 2>&1 ||
	fail "perf record -a failed"
pid=$(perf report -i all.data --stdio --sort pid,comm -q 2> /dev/null |
	awk '$NF == "yield_storm" { split($2, a, ":"); print a[1]; exit }')
[ -n "$pid" ] || fail "no yield_storm rows in perf report --sort pid"
lines() { grep -E '^# (Samples|Event count)|^ +[0-9.]+%' || true; }
for args in "--comms yield_storm" "-c yield_storm,sh" "--pid $pid" "--tid $pid" "-C 0" "--cpu 0-1" "-C 1"; do
	# shellcheck disable=SC2086
	perf report -i all.data --stdio --sort comm,pid $args 2> /dev/null | lines > perf.out
	# shellcheck disable=SC2086
	preport -i all.data --sort comm,pid $args 2> /dev/null | lines > preport.out
	[ -s perf.out ] || fail "perf report $args printed nothing"
	cmp -s perf.out preport.out || { diff perf.out preport.out; fail "preport $args differs from perf report"; }
	echo "ok: $args: $(grep -c % preport.out) rows as perf's"
done

perf record -q -e cpu-clock -o nocpu.data -- "$W/yield_storm" 2000 1 > /dev/null 2>&1 || fail "perf record failed"
perf report -i nocpu.data --stdio -C 0 > /dev/null 2> perf.err || true
grep -q "File does not contain CPU events" perf.err || skip "perf accepts -C on a file without CPU: $(cat perf.err)"
st=0
preport -i nocpu.data -C 0 > out.txt 2> err.txt || st=$?
assert_eq "$st" 2 "exit status of -C on a file without CPU"
grep -q "File does not contain CPU events. Remove -C option to proceed." err.txt || { cat err.txt; fail "no perf's message"; }
echo ok
