# precord -a: a system-wide recording whose samples resolve to the right commands and symbols,
# including processes that were running before the recording started.
. "$(dirname "$0")/lib.sh"

"$W/spin_threads" 3 > pid.txt &
bg=$!
sleep 0.2
precord -q -F 1000 -a -o ours.data -- sleep 1.5 2> rec.err || { cat rec.err; fail "precord -a exit $?"; }
wait $bg
perf_clean ours.data
perf report -i ours.data --stdio --no-children --sort comm,dso,sym -g none -q > rep.txt 2>/dev/null
head -8 rep.txt
grep -q "spin_threads .*spin_alpha" rep.txt || fail "spin_alpha of a process started before -a not resolved"
grep -q "spin_threads .*spin_beta" rep.txt || fail "spin_beta not resolved"
cpus=$(perf report -i ours.data --stdio --no-children --sort cpu -g none -q 2>/dev/null | wc -l)
assert_ge "$cpus" "$(nproc)" "CPUs with samples"
echo ok
