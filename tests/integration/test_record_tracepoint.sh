# Tracepoints in -e, --filter and --off-cpu, checked with perf itself:
#  - sched:sched_switch is sampled at every hit: on a sched_yield storm the file holds one sample
#    per switch the storm counted itself (getrusage of every thread), and perf names the event
#    and decodes its fields from the file's tracing data;
#  - --filter is applied by the kernel (only prev_state=R switches pass 'prev_state == 0'), a
#    filter the kernel refuses and --filter after a non-tracepoint are bad usage (exit 2);
#  - --off-cpu --lossless on the storm: 0 lost, a switch-out sample for every switch and the
#    switch records for the switch-ins.
# Tolerance on "every switch": each thread switches a few times after it read its counters
# (printing, exiting) and the main thread before the storm starts; a lost sample would show as
# fewer samples than switches.
. "$(dirname "$0")/lib.sh"

threads=4
count=${STORM_COUNT:-5000}
storm_switches() { sed -n 's/^yield_storm: threads [0-9]* switches \([0-9]*\) cpu_us [0-9]*$/\1/p' "$1"; }
tp_count() { perf script -i "$1" -F event 2>/dev/null | grep -c '^ *sched:sched_switch:' || true; }

# 1. every switch of the storm, fields decoded by perf
YIELD_STORM_REPORT=1 precord -q -e sched:sched_switch --call-graph none -o tp.data -- \
	"$W/yield_storm" "$count" "$threads" 2> rec.err || { cat rec.err; fail "precord -e sched:sched_switch exit $?"; }
perf_clean tp.data
grep -q "of event 'sched:sched_switch'" "$T/perf-report.out" || fail "perf report does not name the tracepoint"
S=$(storm_switches rec.err)
[ -n "$S" ] || { cat rec.err; fail "no switch count from yield_storm"; }
n=$(tp_count tp.data)
echo "storm: $S switches; file: $n sched_switch samples"
assert_ge "$n" "$S" "sched_switch samples"
assert_le "$n" $((S + 50 * (threads + 1))) "sched_switch samples"
perf script -i tp.data 2>/dev/null | grep -q 'prev_comm=yield_storm prev_pid=[0-9]* prev_prio=[0-9]* prev_state=R ==> next_comm=' ||
	fail "perf script does not decode the sched_switch fields"
[ "$(stat_count tp.data LOST)" = 0 ] || fail "LOST records"

# 2. --filter, applied by the kernel
precord -q -e sched:sched_switch --filter 'prev_state == 1' --call-graph none -o f.data -- \
	sh -c 'for i in 1 2 3 4 5; do sleep 0.01; done' 2> rec.err || { cat rec.err; fail "precord --filter exit $?"; }
perf script -i f.data -F trace 2>/dev/null > f.txt
assert_ge "$(grep -c 'prev_state=S' f.txt)" 5 "sleeping switch-outs through 'prev_state == 1'"
[ "$(grep -vc 'prev_state=S ' f.txt)" = 0 ] || { cat f.txt; fail "the filter let other states through"; }

rc=0; precord -q -e sched:sched_switch --filter 'no_such_field == 1' -o bad.data -- true 2> bad.err || rc=$?
assert_eq "$rc" 2 "exit status of a refused filter"
grep -q "refuses the filter 'no_such_field == 1' of sched:sched_switch" bad.err || { cat bad.err; fail "message of a refused filter"; }
grep -q "events/sched/sched_switch/format" bad.err || { cat bad.err; fail "a refused filter's message names the format file"; }
rc=0; precord -q -e cpu-clock --filter 'x == 1' -o bad.data -- true 2> bad.err || rc=$?
assert_eq "$rc" 2 "exit status of --filter after a non-tracepoint"
grep -q "must be a tracepoint" bad.err || { cat bad.err; fail "message of --filter after cpu-clock"; }
rc=0; precord -q -e sched:no_such_tracepoint -o bad.data -- true 2> bad.err || rc=$?
assert_eq "$rc" 2 "exit status of an unknown tracepoint"
grep -q "unknown event 'sched:no_such_tracepoint'" bad.err || { cat bad.err; fail "message of an unknown tracepoint"; }
# With debugfs mounted, libpfm reads the tracepoints too, and calls an unknown one a bad umask:
# the message is the same with debugfs and without (each in a mount namespace of its own).
for how in "umount -l /sys/kernel/debug 2> /dev/null; true" \
	"mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug"; do
	rc=0; unshare -m --propagation private sh -c "$how; exec precord -q -e sched:no_such_tracepoint -o bad.data -- true" 2> bad.err || rc=$?
	assert_eq "$rc" 2 "exit status of an unknown tracepoint ($how)"
	grep -q "unknown event 'sched:no_such_tracepoint'" bad.err || { cat bad.err; fail "message of an unknown tracepoint ($how)"; }
done

# 3. --off-cpu --lossless: every switch-out with its stack, every switch-in, nothing lost
YIELD_STORM_REPORT=1 precord --lossless --off-cpu -e cpu-clock -F 20000 -o off.data -- \
	"$W/yield_storm" "$count" "$threads" 2> rec.err || { cat rec.err; fail "precord --lossless --off-cpu exit $?"; }
grep -q "^\[ precord: 0 lost \]" rec.err || { cat rec.err; fail "summary does not say 0 lost"; }
perf_clean off.data
perf report -i off.data --stats > stats.txt 2>/dev/null
! grep -qE "^ *LOST(_SAMPLES)? events" stats.txt || fail "perf report --stats shows losses"
S=$(storm_switches rec.err)
n=$(tp_count off.data)
sw=$(stat_count off.data SWITCH)
echo "--off-cpu storm: $S switches; file: $n switch-out samples, $sw SWITCH records"
assert_ge "$n" "$S" "switch-out samples"
assert_le "$n" $((S + 50 * (threads + 1))) "switch-out samples"
assert_ge "$sw" $((2 * S)) "SWITCH records"
perf script -i off.data -F event,ip,sym 2>/dev/null | grep -A12 'sched:sched_switch' | grep -q 'sched_yield' ||
	fail "no switch-out sample has the user stack down to sched_yield"
echo ok
