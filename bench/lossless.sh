# Sourced by bench/run.sh when BENCH contains "lossless" (uses P, W, D, STORM_COUNT, THREADS,
# run_timed and bench/lib.sh). Five tables:
#   1. the sched_yield storm with exactly perf's settings, perf record against precord
#      --lossless: wall time, losses, samples and SWITCH records, precord's paused share;
#   2. harsh settings (64 KiB stacks, 50 kHz, a fork/exec tree, a CPU hog), perf against precord;
#   3. bytes that reach the rings after a pause request: freezer, backstop, both
#      (build/tools/backstop_reaction);
#   4. the pause reaction latency per mechanism (precord bench pause);
#   5. held CPUs: the storm on the ring precord derives while cpu_holder takes every CPU in
#      turn at SCHED_FIFO 99, as a hypervisor's steal does, perf against precord --lossless.
# The seed's settings (issue 10): -m 64 is no longer accepted with --lossless at these settings
# (precord derives its ring from the settings and the pause it times at start, 8 MiB on
# 2026-12-03, and refuses less than it needs), so both recorders get the ring precord derives.
LL_OPTS="-e cpu-clock -F 20000 --switch-events --call-graph dwarf"
LL_RING=$($P --lossless $LL_OPTS -o "$D/probe.data" -- true 2>&1 >/dev/null | sed -n 's/.*rings of \([0-9]*\) KiB per CPU.*/\1/p')
LL_OPTS="$LL_OPTS -m ${LL_RING:-2048}K"
LOSSLESS_REPS=${LOSSLESS_REPS:-3}
PAUSE_CYCLES=${PAUSE_CYCLES:-500}
# Which tables (all by default): LOSSLESS_TABLES="seed harsh reaction pause held"
LOSSLESS_TABLES=${LOSSLESS_TABLES:-seed harsh reaction pause held}
ll_table() { case " $LOSSLESS_TABLES " in *" $1 "*) return 0 ;; esac; return 1; }

# count of TYPE records in a saved perf report --stats
ll_count() { awk -v t="$2" '$1 == t && $2 == "events:" { print $3; f = 1; exit } END { if (!f) print 0 }' "$1"; }

if ll_table seed; then
echo "## --lossless on the storm: perf's settings ($LL_OPTS)"
echo
export YIELD_STORM_REPORT=1
: > "$D/llp"; : > "$D/llr"; : > "$D/llb"; : > "$D/llf"; : > "$D/llfs"; ll_rc=0
for rep in $(seq "$LOSSLESS_REPS"); do
	# the bare run in every round too: on a shared machine the load moves between rounds
	run_timed $W/yield_storm "$STORM_COUNT" "$THREADS"; echo "$T" >> "$D/llb"
	sb=$(sed -n 's/^yield_storm: threads [0-9]* switches \([0-9]*\) .*/\1/p' "$D/run.err")
	# (each run after the one before is on disk: see the harsh table below)
	sync; run_timed perf record $LL_OPTS -o "$D/perf-ll.data" -- $W/yield_storm "$STORM_COUNT" "$THREADS"; echo "$T" >> "$D/llp"
	sp=$(sed -n 's/^yield_storm: threads [0-9]* switches \([0-9]*\) .*/\1/p' "$D/run.err")
	sync; run_timed $P $LL_OPTS --lossless -o "$D/precord-ll.data" -- $W/yield_storm "$STORM_COUNT" "$THREADS" || ll_rc=$?; echo "$T" >> "$D/llr"
	sr=$(sed -n 's/^yield_storm: threads [0-9]* switches \([0-9]*\) .*/\1/p' "$D/run.err")
	ll_line=$(grep "lossless via" "$D/run.err")
	# the floor: the same storm sampled at 20 kHz with nothing recorded, with and without
	# switch records (build/tools/sample_floor: no ring, no stack, no call graph)
	run_timed build/tools/sample_floor 20000 -- $W/yield_storm "$STORM_COUNT" "$THREADS"; echo "$T" >> "$D/llf"
	run_timed build/tools/sample_floor 20000 switch -- $W/yield_storm "$STORM_COUNT" "$THREADS"; echo "$T" >> "$D/llfs"
done
tp=$(median "$D/llp"); tr=$(median "$D/llr"); tb=$(median "$D/llb")
share=$(echo "$ll_line" | sed -n 's/.*(\([0-9.]*%\) of the run).*/\1/p')
npauses=$(echo "$ll_line" | sed -n 's/.*: \([0-9]*\) pauses,.*/\1/p')
mech=$(echo "$ll_line" | sed -n 's/.*lossless via \([^:]*\):.*/\1/p')
unset YIELD_STORM_REPORT

printf '| recorder | wall s | x bare | lost events | lost samples | samples | SWITCH records | storm switches x 2 | paused | precord/perf time |\n'
printf '|---|---|---|---|---|---|---|---|---|---|\n'
printf '| (bare) | %s | 1.00 | | | | | %s | | |\n' "$tb" "$((2 * ${sb:-0}))"
tf=$(median "$D/llf"); tfs=$(median "$D/llfs")
printf '| (sampled at 20 kHz, nothing recorded) | %s | %s | | | | | | | |\n' "$tf" "$(ratio "$tf" "$tb")"
printf '| (the same with switch records asked for) | %s | %s | | | | | | | |\n' "$tfs" "$(ratio "$tfs" "$tb")"
for who in perf precord; do
	f="$D/$who-ll.data"
	perf report -i "$f" --stats > "$D/$who-ll.stats" 2>/dev/null
	if [ $who = perf ]; then t=$tp s=$sp paused="-" rel="1.00"; else t=$tr s=$sr paused="$share ($npauses pauses)" rel=$(ratio "$tr" "$tp"); fi
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$who" "$t" "$(ratio "$t" "$tb")" \
		"$(lost_events "$f")" "$(lost_samples "$f")" "$(ll_count "$D/$who-ll.stats" SAMPLE)" \
		"$(ll_count "$D/$who-ll.stats" SWITCH)" "$((2 * ${s:-0}))" "$paused" "$rel"
done
echo
echo "(wall: medians of $LOSSLESS_REPS runs each, bare, perf, precord and the two floors in turn: bare $(tr '\n' ' ' < "$D/llb")s, perf $(tr '\n' ' ' < "$D/llp")s, precord"
echo "$(tr '\n' ' ' < "$D/llr")s; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; the other columns are the last pair's. Storm: $THREADS threads x $STORM_COUNT sched_yield; \"storm switches x 2\" is what the storm counted"
echo "itself with getrusage in that run, times two for the out and in records of each switch; precord"
echo "paused the target with the $mech and exited $ll_rc (a failing run's status, 0 if none failed); both files are read back with perf."
echo "The two rows in parentheses are the floor of any recorder at 20 kHz on this host: build/tools/sample_floor opens"
echo "the storm's cpu-clock events as the recorders do, with no ring, so the kernel takes every interrupt, switches"
echo "the events with the threads and prepares every sample, then drops it; floors $(tr '\n' ' ' < "$D/llf")s and $(tr '\n' ' ' < "$D/llfs")s.)"
echo

fi

if ll_table harsh; then
echo "## --lossless at harsh settings: perf record with the same settings and the ring precord derives"
echo
# Shorter storms here: perf writes gigabytes at these settings.
HARSH_COUNT=${HARSH_COUNT:-$((STORM_COUNT / 10))}
# A fork/exec tree: 8 children, every other one exec'ing a shell loop, the others a storm.
LL_TREE="for i in 1 2 3 4 5 6 7 8; do if [ \$((i % 2)) = 0 ]; then sh -c 'i=0; while [ \$i -lt 20000 ]; do i=\$((i + 1)); done' & else $W/yield_storm $((HARSH_COUNT / 8)) 1 & fi; done; wait"
printf '| settings | workload | ring/CPU | perf wall s | perf lost | perf MB | precord wall s | precord lost | precord MB | pauses (paused) | precord/perf time |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
for row in "dwarf,65528 -F 20000|storm" "dwarf,65528 -F 50000|storm" "dwarf -F 20000|tree" "dwarf -F 20000|storm+hog"; do
	opts="-e cpu-clock --switch-events --call-graph ${row%|*}" wl=${row#*|}
	ring=$($P --lossless $opts -o "$D/probe.data" -- true 2>&1 >/dev/null | sed -n 's/.*rings of \([0-9]*\) KiB per CPU.*/\1/p')
	hog=
	case $wl in
	tree) set -- sh -c "$LL_TREE" ;;
	*) set -- $W/yield_storm "$HARSH_COUNT" "$THREADS" ;;
	esac
	case $wl in *hog) stress-ng --cpu "$NCPU" --quiet & hog=$! ;; esac
	# precord first, each run after the previous run's files are on disk (sync): perf writes
	# gigabytes here, and while the kernel wrote back 1-4 GB of perf's file, a real-time
	# thread on this VM waited up to 0.28 s for its CPU (precord's watchers among them; a run
	# then lost). oom: the OOM killer's count during the row (perf's readers at these sizes).
	oom0=$(awk '$1 == "oom_kill" { print $2 }' /proc/vmstat)
	sync; run_timed $P $opts --lossless -o "$D/precord-h.data" -- "$@"; thr=$T
	hl=$(grep "lossless via" "$D/run.err")
	cp "$D/run.err" "$D/precord-h.err"
	sync; run_timed perf record $opts -m "${ring:-2048}K" -o "$D/perf-h.data" -- "$@"; thp=$T
	[ -n "$hog" ] && kill "$hog" && wait "$hog" 2>/dev/null
	lp=$(lost_all "$D/perf-h.data")
	lr=$(lost_all "$D/precord-h.data")
	printf '| %s | %s | %s KiB | %s | %s | %s | %s | %s | %s | %s (%s) | %s |\n' "${row%|*}" "$wl" "${ring:-?}" \
		"$thp" "$lp" "$(mb "$(size_of "$D/perf-h.data")")" "$thr" "$lr" "$(mb "$(size_of "$D/precord-h.data")")" \
		"$(echo "$hl" | sed -n 's/.*: \([0-9]*\) pauses,.*/\1/p')" "$(echo "$hl" | sed -n 's/.*(\([0-9.]*%\) of the run).*/\1/p')" \
		"$(ratio "$thr" "$thp")"
	# what precord says of its pauses when it lost (the slowest pause, the host's steal time)
	[ "$lr" = 0 ] || { echo "${row%|*} $wl: precord said:"; grep -E "slowest pause|decided|later than|hypervisor|lost" "$D/precord-h.err"; } >> "$D/harsh-notes"
	oom1=$(awk '$1 == "oom_kill" { print $2 }' /proc/vmstat)
	[ "${oom0:-0}" = "${oom1:-0}" ] || echo "${row%|*} $wl: the OOM killer ran $((oom1 - oom0)) times during this row (dmesg names whom)" >> "$D/harsh-notes"
done
echo
[ ! -s "$D/harsh-notes" ] || { sed 's/^/    /' "$D/harsh-notes"; echo; }
echo "(one run each; --switch-events on every row; storm: $THREADS threads x $HARSH_COUNT yields; tree: 8 children,"
echo "half exec'ing a shell loop; hog: stress-ng --cpu $NCPU at the same nice level during both runs. lost = LOST"
echo "events + LOST_SAMPLES, read back with perf. The ring is what precord derives for --lossless; perf gets the same.)"
echo

fi

if ll_table reaction; then
echo "## --lossless: what reaches the rings after a pause is requested (freezer, backstop, both)"
echo
if build/tools/backstop_reaction "${BACKSTOP_CYCLES:-300}" 20000 > "$D/backstop.txt" 2> "$D/backstop.err"; then
	printf '| way | bytes after the request p50 | p99 | max | until stopped p50 us | p99 us | max us |\n|---|---|---|---|---|---|---|\n'
	awk '!/^#/ && NF == 7 { printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }' "$D/backstop.txt"
	echo
	sed -n 's/^# \([0-9].*\)/(\1; freezer: the cgroup2 freezer alone, backstop: the kernel-side SIGSTOP at the next sample alone, both: as precord does with PRECORD_BACKSTOP=1 (the backstop is off by default).)/p' "$D/backstop.txt"
else
	echo "(not measured: $(cat "$D/backstop.err"))"
fi
echo

fi

if ll_table pause; then
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
fi

if ll_table held; then
# The ring precord derives (LL_RING) for both, precord with its own marks: what a user gets.
# HELD_RING=256 HELD_MARKS="--high-watermark 2 --low-watermark 1" gives the stress settings
# of the table before (1 MiB rings: outside the guarantee on a held CPU, precord.1).
HELD_OPTS="-e cpu-clock -F 20000 --switch-events --call-graph dwarf -m ${HELD_RING:-${LL_RING:-2048}K}"
HELD_MARKS=${HELD_MARKS:-}
HELD_COUNT=${HELD_COUNT:-300000}
HELD_REPS=${HELD_REPS:-5}
echo "## --lossless while the CPUs are held: $HELD_OPTS${HELD_MARKS:+ (precord $HELD_MARKS)}, cpu_holder 20 ms of every 60 on each CPU"
echo
# cpu_holder (tests/workloads) spins at SCHED_FIFO 99, above precord's watchers, 10-30 ms of
# every 60 ms on each CPU, from the storm's start to its end: what the CI host's steal did to
# test_lossless_matrix (1.1 s of a 7 s run).
export YIELD_STORM_REPORT=1
: > "$D/heldp"; : > "$D/heldr"; : > "$D/heldlp"; : > "$D/heldlr"; : > "$D/heldpa"
: > "$D/heldxp"; : > "$D/heldxr"
held_run() { # WHO(p|r) OUT RECORDER...: one storm beside cpu_holder; its wall time, exit status
	# and losses ("-" when it wrote no file) appended to $D/held{,x,l}WHO
	who=$1 out=$2; shift 2
	rm -f "$D/held.go" "$D/held.stop" "$out" # a refused run leaves no file of the run before
	$W/cpu_holder 20 60 120 "$D/held.go" "$D/held.stop" 2> "$D/holder.err" &
	holder=$!
	rc=0
	sync; run_timed "$@" -o "$out" -- sh -c 'touch "$1" && exec "$2" "$3" "$4"' sh "$D/held.go" \
		$W/yield_storm "$HELD_COUNT" "$THREADS" || rc=$?
	touch "$D/held.stop"; wait "$holder"
	echo "$T" >> "$D/held$who"; echo "$rc" >> "$D/heldx$who"
	if [ -s "$out" ]; then lost_all "$out"; else echo "-"; fi >> "$D/heldl$who"
}
for rep in $(seq "$HELD_REPS"); do
	held_run r "$D/precord-held.data" $P $HELD_OPTS --lossless $HELD_MARKS
	sed -n 's/.*lossless via [^:]*: \([0-9]*\) pauses,.*/\1/p' "$D/run.err" >> "$D/heldpa"
	held_run p "$D/perf-held.data" perf record $HELD_OPTS
done
unset YIELD_STORM_REPORT
tp=$(median "$D/heldp"); tr=$(median "$D/heldr")
printf '| recorder | wall s (median) | runs | exit status per run | lost per run | runs that lost | pauses per run | precord/perf time |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for who in perf precord; do
	if [ $who = perf ]; then t=$tp tf="$D/heldp" xf="$D/heldxp" lf="$D/heldlp" pa="-" rel=1.00
	else t=$tr tf="$D/heldr" xf="$D/heldxr" lf="$D/heldlr" pa=$(tr '\n' ' ' < "$D/heldpa") rel=$(ratio "$tr" "$tp"); fi
	printf '| %s | %s | %s | %s | %s | %s of %s | %s | %s |\n' "$who" "$t" "$(tr '\n' ' ' < "$tf")" \
		"$(tr '\n' ' ' < "$xf")" "$(tr '\n' ' ' < "$lf")" "$(grep -c '^[1-9]' "$lf")" "$HELD_REPS" "$pa" "$rel"
done
echo
echo "($HELD_REPS runs each, precord and perf in turn; storm: $THREADS threads x $HELD_COUNT sched_yield; lost = LOST events +"
echo "LOST_SAMPLES, read back with perf; the holder's last run: $(cat "$D/holder.err"); load average $(cut -d' ' -f1-3 /proc/loadavg).)"
echo
fi
