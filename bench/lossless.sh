# Sourced by bench/run.sh when BENCH contains "lossless" (uses P, W, D, STORM_COUNT, THREADS,
# run_timed and bench/lib.sh). Two tables:
#   1. the sched_yield storm with exactly perf's settings, perf record against precord
#      --lossless: wall time, losses, samples and SWITCH records, precord's paused share;
#   2. the pause reaction latency per mechanism (precord bench pause).
LL_OPTS="-e cpu-clock -F 20000 --switch-events --call-graph dwarf -m 64"
LOSSLESS_REPS=${LOSSLESS_REPS:-3}
PAUSE_CYCLES=${PAUSE_CYCLES:-500}

# count of TYPE records in a saved perf report --stats
ll_count() { awk -v t="$2" '$1 == t && $2 == "events:" { print $3; f = 1; exit } END { if (!f) print 0 }' "$1"; }

echo "## --lossless on the storm: perf's settings ($LL_OPTS)"
echo
export YIELD_STORM_REPORT=1
run_timed $W/yield_storm "$STORM_COUNT" "$THREADS"; tb=$T
sb=$(sed -n 's/^yield_storm: threads [0-9]* switches \([0-9]*\) .*/\1/p' "$D/run.err")
: > "$D/llp"; : > "$D/llr"; ll_rc=0
for rep in $(seq "$LOSSLESS_REPS"); do
	run_timed perf record $LL_OPTS -o "$D/perf-ll.data" -- $W/yield_storm "$STORM_COUNT" "$THREADS"; echo "$T" >> "$D/llp"
	sp=$(sed -n 's/^yield_storm: threads [0-9]* switches \([0-9]*\) .*/\1/p' "$D/run.err")
	run_timed $P $LL_OPTS --lossless -o "$D/precord-ll.data" -- $W/yield_storm "$STORM_COUNT" "$THREADS" || ll_rc=$?; echo "$T" >> "$D/llr"
	sr=$(sed -n 's/^yield_storm: threads [0-9]* switches \([0-9]*\) .*/\1/p' "$D/run.err")
	ll_line=$(grep "lossless via" "$D/run.err")
done
tp=$(median "$D/llp"); tr=$(median "$D/llr")
share=$(echo "$ll_line" | sed -n 's/.*(\([0-9.]*%\) of the run).*/\1/p')
npauses=$(echo "$ll_line" | sed -n 's/.*: \([0-9]*\) pauses,.*/\1/p')
mech=$(echo "$ll_line" | sed -n 's/.*lossless via \([^:]*\):.*/\1/p')
unset YIELD_STORM_REPORT

printf '| recorder | wall s | x bare | lost events | lost samples | samples | SWITCH records | storm switches x 2 | paused | precord/perf time |\n'
printf '|---|---|---|---|---|---|---|---|---|---|\n'
printf '| (bare) | %s | 1.00 | | | | | %s | | |\n' "$tb" "$((2 * ${sb:-0}))"
for who in perf precord; do
	f="$D/$who-ll.data"
	perf report -i "$f" --stats > "$D/$who-ll.stats" 2>/dev/null
	if [ $who = perf ]; then t=$tp s=$sp paused="-" rel="1.00"; else t=$tr s=$sr paused="$share ($npauses pauses)" rel=$(ratio "$tr" "$tp"); fi
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$who" "$t" "$(ratio "$t" "$tb")" \
		"$(lost_events "$f")" "$(lost_samples "$f")" "$(ll_count "$D/$who-ll.stats" SAMPLE)" \
		"$(ll_count "$D/$who-ll.stats" SWITCH)" "$((2 * ${s:-0}))" "$paused" "$rel"
done
echo
echo "(wall: medians of $LOSSLESS_REPS runs each, perf and precord alternating: perf $(tr '\n' ' ' < "$D/llp")s, precord"
echo "$(tr '\n' ' ' < "$D/llr")s; the other columns are the last pair's. Storm: $THREADS threads x $STORM_COUNT sched_yield; \"storm switches x 2\" is what the storm counted"
echo "itself with getrusage in that run, times two for the out and in records of each switch; precord"
echo "paused the target with the $mech and exited $ll_rc (a failing run's status, 0 if none failed); both files are read back with perf.)"
echo

echo "## --lossless pause reaction: request -> the kernel reports the whole target stopped"
echo
$P bench pause -n "$PAUSE_CYCLES" > "$D/pause.txt" 2> "$D/pause.err"
printf '| mechanism | cycles | p50 us | p90 us | p99 us | max us |\n|---|---|---|---|---|---|\n'
awk '!/^#/ && NF >= 6 { printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }
     !/^#/ && NF < 6 && NF > 0 { printf "| %s | | %s |\n", $1, substr($0, index($0, $3)) }' "$D/pause.txt"
echo
sed -n 's/^# target: /(target: /p' "$D/pause.txt" | sed 's/$/. Before the request comes the watcher'"'"'s look at the rings, every 0.1 to 2 ms as their margins below the high mark require.)/'
[ -s "$D/pause.err" ] && sed 's/^/    /' "$D/pause.err"
echo
