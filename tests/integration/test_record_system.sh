# precord -a: a system-wide recording whose samples resolve to the right commands and symbols,
# including processes that were running before the recording started.
. "$(dirname "$0")/lib.sh"

# spin_threads runs until killed, started (its pid printed) before the recording.
"$W/spin_threads" 600 > pid.txt &
bg=$!
trap 'kill $bg 2> /dev/null || true; rm -rf "$T"' EXIT
wait_until "spin_threads' pid" has_line pid.txt
precord -q -F 1000 -a -o ours.data -- sleep 1.5 2> rec.err || { rc=$?; cat rec.err; fail "precord -a exit $rc"; }
kill $bg
wait $bg 2> /dev/null || true
perf_clean ours.data
perf report -i ours.data --stdio --no-children --sort comm,dso,sym -g none -q > rep.txt 2>/dev/null
head -8 rep.txt
grep -q "spin_threads .*spin_alpha" rep.txt || fail "spin_alpha of a process started before -a not resolved"
grep -q "spin_threads .*spin_beta" rep.txt || fail "spin_beta not resolved"
cpus=$(perf report -i ours.data --stdio --no-children --sort cpu -g none -q 2>/dev/null | wc -l)
assert_ge "$cpus" "$(nproc)" "CPUs with samples"
echo ok
