# --switch-events on a small sched_yield storm: context-switch records are in the file, perf
# reads them, and their count is what the kernel says happened. The storm counts its own
# context switches (getrusage of every thread: YIELD_STORM_REPORT); each switch is an out and an
# in record, so the file holds at least 2 x that many, less any the kernel reports lost (this
# is not --lossless: a LOST record carries the count of what it could not write). How many
# yields really switch depends on the scheduler, not on the test.
. "$(dirname "$0")/lib.sh"

YIELD_STORM_REPORT=1 precord -q --switch-events -F 1000 -m 256 -o ours.data -- \
	"$W/yield_storm" 20000 $((2 * $(nproc))) 2> rec.err || { cat rec.err; fail "precord exit $?"; }
perf_clean ours.data
S=$(sed -n 's/^yield_storm: threads [0-9]* switches \([0-9]*\) cpu_us [0-9]*$/\1/p' rec.err)
[ -n "$S" ] || { cat rec.err; fail "no switch report from yield_storm"; }
sw=$(stat_count ours.data SWITCH)
lost=$(perf script -i ours.data --show-lost-events -F comm 2> /dev/null |
	awk '$2 == "PERF_RECORD_LOST" && $3 == "lost" { n += $4 } END { print n + 0 }')
echo "storm: $S switches; file: $sw SWITCH records, $lost events lost"
assert_ge "$S" 1000 "switches the storm counted"
assert_ge $((sw + lost)) $((2 * S)) "SWITCH records + lost events (2 x $S switches)"
n=$(perf script -i ours.data --show-switch-events -F comm,tid,event 2> /dev/null | grep -c "PERF_RECORD_SWITCH" || true)
assert_eq "$n" "$sw" "switch events perf script shows"
echo ok
