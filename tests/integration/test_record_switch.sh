# --switch-events on a small sched_yield storm: context-switch records are in the file, perf
# reads them, and the count is close to what the kernel says happened.
. "$(dirname "$0")/lib.sh"

precord -q --switch-events -F 1000 -m 256 -o ours.data -- "$W/yield_storm" 20000 $((2 * $(nproc))) 2> rec.err ||
	{ cat rec.err; fail "precord exit $?"; }
perf_clean ours.data
sw=$(stat_count ours.data SWITCH)
echo "switch records: $sw"
# 2 threads x 20000 yields: each yield that really switches gives an out and an in record;
# at least the yields themselves must show up as switch records.
assert_ge "$sw" 20000 "SWITCH records"
perf script -i ours.data --show-switch-events -F comm,tid,event 2>/dev/null | grep -c "PERF_RECORD_SWITCH" > n.txt || true
assert_ge "$(cat n.txt)" 20000 "switch events seen by perf script"
echo ok
