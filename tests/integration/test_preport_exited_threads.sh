#!/bin/sh
# sched_switch samples of threads that have exited carry tid -1 (the kernel no longer maps the
# task to a pid of the recording's namespace), with the process's pid. perf makes that a thread
# of its own with no COMM, named ":-1" (--sort comm) and "-1::-1" (--sort pid), and preport must
# too, not lend it the process's name.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/yield_storm" ] || fail "the yield_storm workload is missing (make test-bins)"
perf list 2> /dev/null | grep -q 'sched:sched_switch' || skip "no sched:sched_switch tracepoint"

n=0
while :; do
	n=$((n + 1))
	perf record -q -e sched:sched_switch -a -o sw.data -- "$W/yield_storm" 20000 2 > /dev/null 2>&1 ||
		fail "perf record -e sched:sched_switch failed"
	perf report -i sw.data --stdio --sort comm 2> /dev/null | grep -q '% *:-1 *$' && break
	[ $n -lt 5 ] || skip "5 recordings without a sample of tid -1"
done
for key in comm pid comm,pid; do
	perf report -i sw.data --stdio --sort $key 2> /dev/null | grep -E '^ +[0-9.]+%' > perf.rows
	preport -i sw.data --sort $key 2> /dev/null | grep -E '^ +[0-9.]+%' > preport.rows
	cmp -s perf.rows preport.rows || { diff perf.rows preport.rows | head -n 20; fail "--sort $key differs from perf report"; }
	echo "ok: --sort $key: $(wc -l < perf.rows) rows as perf's"
done
grep -q -- ' -1::-1 *$' preport.rows || fail "no -1::-1 row"
echo ok
