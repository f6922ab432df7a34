# SIGINT in the middle of a run stops the recording cleanly: the command is ended, the file is
# finalized and complete, the summary is printed, and precord reports the command's status. How
# long precord takes to stop depends on the load: it is printed, not asserted (a precord that
# never stops fails on the wait's one-minute bound).
. "$(dirname "$0")/lib.sh"

precord -o ours.data -- "$W/hotlib" 30 > out.txt 2> rec.err &
rec=$!
wait_samples ours.data 1100 || fail "precord wrote too few samples in 120 s"
kill -INT $rec
t0=$(date +%s%N)
ended() { ! kill -0 $rec 2> /dev/null || [ "$(state $rec)" = Z ]; }
wait_until "precord to stop after SIGINT" ended
echo "precord stopped $(( ($(date +%s%N) - t0) / 1000000 )) ms after SIGINT"
set +e
wait $rec
rc=$?
set -e
cat rec.err
grep -q "samples" rec.err || fail "no summary after SIGINT"
# the command got SIGTERM from precord (perf's behaviour): 128 + 15
assert_eq "$rc" 143 "exit status after SIGINT (command terminated)"
perf_clean ours.data
samples=$(stat_count ours.data SAMPLE)
assert_ge "$samples" 1000 "samples before SIGINT"
perf report -i ours.data --header-only 2>&1 | grep -q "data size" || fail "header unreadable"
echo ok
