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
wait_until "precord's events" has_perf_events "$rec"
c0=$(thread_cpu "$pid")
wait_samples ours.data 1000 || fail "precord -p wrote too few samples in 120 s"
c1=$(thread_cpu "$pid")
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
# each thread's share of the samples is its share of the CPU time while precord recorded (not
# 50%: a busy machine may favour either thread)
a=$(sym_pct ours.data spin_alpha)
b=$(sym_pct ours.data spin_beta)
wa=$(share_pct "$c0" "$c1" 2) wb=$(share_pct "$c0" "$c1" 3)
close_to "$a" "$wa" 10 || fail "spin_alpha $a% (its thread had $wa% of the CPU time)"
close_to "$b" "$wb" 10 || fail "spin_beta $b% (its thread had $wb% of the CPU time)"
echo ok
