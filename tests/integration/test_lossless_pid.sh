# --lossless -p on a running process: paused with SIGSTOP/SIGCONT (we never move a user's running
# processes between cgroups), pauses forced by a low high
# watermark (2% of a 1 MiB ring, the smallest precord accepts with that mark: two DWARF
# samples), nothing lost, and afterwards the process is not left stopped and finishes.
# precord is stopped once its file holds 64 KiB of recorded data (its start, which reads
# /proc/kallsyms, took over 1.5 s on a loaded machine); the target spins until the test creates
# its stop file, so that it outlives precord however long that takes.
. "$(dirname "$0")/lib.sh"
trap ': > "$T/stop-spin"; rm -rf "$T"' EXIT INT TERM

SPIN_STOP=$T/stop-spin "$W/spin_threads" 600 > pid.txt &
bg=$!
# its threads run
threads() { [ "$(ls /proc/$bg/task | wc -l)" = 3 ]; }
wait_until "spin_threads' threads" threads
# the pause is not timed at start (2 ms allowed for): beside a CPU hog the timing could find more
# than -m 256 leaves above a 2% mark, and this -m would be refused (test_lossless_fail)
PRECORD_NO_CALIBRATE=1 precord -e cpu-clock -F 20000 --call-graph dwarf -m 256 --high-watermark 2 \
	--low-watermark 1 --lossless -o ours.data -p "$bg" > rec.out 2> rec.err &
rec=$!
size() { stat -c %s ours.data 2>/dev/null || echo 0; }
recorded() { kill -0 $rec 2>/dev/null || fail "precord ended: $(cat rec.err)"; [ "$(size)" -ge 65536 ]; }
wait_until "64 KiB recorded" recorded
kill -INT $rec
rc=0
wait $rec || rc=$?
cat rec.err
assert_eq "$rc" 0 "precord --lossless -p exit status"
grep -q "^\[ precord: 0 lost \]" rec.err || fail "summary does not say 0 lost"
line=$(grep "lossless via" rec.err) || fail "no lossless line in the summary"
case "$line" in *"lossless via signals:"*) ;; *) fail "mechanism is not signals: $line" ;; esac
pauses=$(echo "$line" | sed -n 's/.*: \([0-9]*\) pauses,.*/\1/p')
assert_ge "${pauses:-0}" 1 "pauses"

# not left stopped: every thread runs (R) or sleeps (S), none is in T
for s in /proc/$bg/task/*/stat; do
	st=$(sed 's/.*) //' "$s" | cut -d' ' -f1)
	case "$st" in T|t) fail "thread $(basename "$(dirname "$s")") of the target left stopped" ;; esac
done
kill -0 $bg || fail "the target ended before it was told to"
: > stop-spin
rc=0
wait $bg || rc=$?
assert_eq "$rc" 0 "exit status of the target"

perf_clean ours.data
perf report -i ours.data --stats > stats.txt 2>/dev/null
! grep -qE "^ *LOST(_SAMPLES)? events" stats.txt || fail "perf report --stats shows losses"
preport --stats -i ours.data > pstats.txt 2>&1 || fail "preport --stats exit $?"
grep -A3 "precord pause stats" pstats.txt || fail "preport --stats shows no pause statistics"
p2=$(awk '$1 == "pauses:" { print $2 }' pstats.txt)
assert_eq "$p2" "$pauses" "pauses stored in the file"
grep -q "^ *mechanism: signals$" pstats.txt || fail "preport --stats does not name the mechanism"
byring=$(sed -n 's/^ *pauses by ring://p' pstats.txt | tr ' ' '\n' | awk -F: 'NF == 2 { n += $2 } END { print n + 0 }')
# (a pause has one ring for its cause, or none: a full disk's)
assert_ge "$byring" 1 "pauses by ring, summed"
assert_le "$byring" "$pauses" "pauses by ring, summed"
echo ok
