# precord -a: a system-wide recording whose samples resolve to the right commands and symbols,
# including processes that were running before the recording started. The recording lasts until
# spin_threads has had 0.4 s more of CPU time (its samples do not depend on the load).
. "$(dirname "$0")/lib.sh"

# spin_threads runs until killed, started (its two spinning threads running) before the recording.
"$W/spin_threads" 600 > pid.txt &
bg=$!
trap 'kill $bg 2> /dev/null || true; rm -rf "$T"' EXIT
threads() { [ "$(ls /proc/$bg/task | wc -l)" = 3 ]; }
wait_until "spin_threads' threads" threads
cat > until_cpu.sh <<'EOF'
# until_cpu.sh PID TICKS: until PID has had TICKS more clock ticks of CPU time
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
end=$(( $(ticks "$1") + $2 ))
while [ "$(ticks "$1")" -lt "$end" ]; do sleep 0.02; done
EOF
# No call graphs and 4 MiB rings: a minute of samples per CPU fits even if the readers do not
# run at all (at load 30 the default DWARF stacks overflowed 2 MiB rings: perf warned of losses).
precord -q -F 1000 -a --call-graph none -m 4M -o ours.data -- sh until_cpu.sh "$bg" $(( 40 * $(getconf CLK_TCK) / 100 )) 2> rec.err ||
	{ rc=$?; cat rec.err; fail "precord -a exit $rc"; }
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
