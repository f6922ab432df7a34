# precord -p on a running multi-threaded program: samples resolve to its command and to the
# right symbol of each thread.
. "$(dirname "$0")/lib.sh"

# spin_threads spins until the test creates its stop file
trap ': > "$T/stop-spin"; rm -rf "$T"' EXIT INT TERM
SPIN_STOP=$T/stop-spin "$W/spin_threads" 600 > pid.txt &
bg=$!
wait_until "spin_threads' pid" has_line pid.txt
pid=$(head -n 1 pid.txt)
assert_eq "$pid" "$bg" "pid printed by spin_threads"
precord -q -F 1000 -o ours.data -p "$pid" > rec.out 2> rec.err &
rec=$!
wait_samples ours.data 1000 || fail "precord -p wrote too few samples in 120 s"
kill -INT $rec
wait $rec || { cat rec.err; fail "precord -p exit status $?"; }
kill -0 $bg || fail "spin_threads ended before it was told to"
: > stop-spin
wait $bg || fail "spin_threads exit $?"
perf_clean ours.data
perf report -i ours.data --stdio --no-children --sort comm,sym -g none -q > rep.txt 2>/dev/null
cat rep.txt | head -5
grep -q "spin_threads.*spin_alpha" rep.txt || fail "spin_alpha not attributed to spin_threads"
grep -q "spin_threads.*spin_beta" rep.txt || fail "spin_beta not attributed to spin_threads"
a=$(sym_pct ours.data spin_alpha)
b=$(sym_pct ours.data spin_beta)
close_to "$a" 50 15 || fail "spin_alpha $a% (expected about half)"
close_to "$b" 50 15 || fail "spin_beta $b% (expected about half)"
echo ok
