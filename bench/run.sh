#!/bin/sh
# make bench: precord against perf record, side by side in one run, printed as ratios.
# Sizes can be reduced for a quick look: STORM_COUNT=200000 PIPE_LOOPS=20000 RECORD_REPS=1 sh bench/run.sh
# Sections: BENCH="record synth lossless offcpu report daemon_cost daemon" (default: all but daemon).
set -u
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
W=build/workloads
P=./precord
STORM_COUNT=${STORM_COUNT:-1000000}
PIPE_LOOPS=${PIPE_LOOPS:-100000}
RECORD_REPS=${RECORD_REPS:-3}
NCPU=$(nproc)
THREADS=$((2 * NCPU))
BENCH=${BENCH:-record synth lossless offcpu report daemon_cost}
D=$(mktemp -d /tmp/precord-bench.XXXXXX)
trap 'rm -rf "$D"' EXIT INT TERM

echo "# precord bench, $(date -u +%Y-%m-%d), $(uname -r), $NCPU CPUs"
echo "# storm: $THREADS threads x $STORM_COUNT sched_yield; pipe: perf bench sched pipe -l $PIPE_LOOPS"
echo

run_timed() { # OUTVAR-prefix command... : sets T (seconds)
	s=$(now); "$@" > "$D/run.out" 2> "$D/run.err"; rc=$?; e=$(now)
	T=$(elapsed "$s" "$e")
	return $rc
}

case " $BENCH " in *" record "*)
	echo "## Recording: same event, frequency, stack size and ring size (-e cpu-clock -F 4000 --call-graph dwarf,8192 -m 2M, zstd 1)"
	echo
	echo "Medians of $RECORD_REPS runs each, perf and precord alternating: single runs swing by 10% in time"
	echo "here, and perf's file size with the stale bytes its stack dumps carry past dyn_size (precord"
	echo "zeroes them)."
	echo
	printf '| workload | bare s | perf s | precord s | slowdown perf | slowdown precord | precord/perf time | lost perf | lost precord | MB perf -z | MB precord | size ratio |\n'
	printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
	for wl in storm pipe; do
		if [ $wl = storm ]; then set -- $W/yield_storm "$STORM_COUNT" "$THREADS"; else set -- perf bench sched pipe -l "$PIPE_LOOPS"; fi
		run_timed "$@"; tb=$T
		: > "$D/tp"; : > "$D/tr"; : > "$D/sp"; : > "$D/sr"; lp=0; lr=0
		for rep in $(seq "$RECORD_REPS"); do
			run_timed perf record -e cpu-clock -F 4000 --call-graph dwarf,8192 -m 2M -z -o "$D/perf.data" -- "$@"; echo "$T" >> "$D/tp"
			run_timed $P -q -e cpu-clock -F 4000 --call-graph dwarf,8192 -m 2M -z -o "$D/precord.data" -- "$@"; echo "$T" >> "$D/tr"
			lp=$(plus "$lp" "$(lost_all "$D/perf.data")")
			lr=$(plus "$lr" "$(lost_all "$D/precord.data")")
			size_of "$D/perf.data" >> "$D/sp"; size_of "$D/precord.data" >> "$D/sr"
		done
		tp=$(median "$D/tp"); tr=$(median "$D/tr"); sp=$(median "$D/sp"); sr=$(median "$D/sr")
		printf '| %s | %s | %s | %s | %sx | %sx | %s | %s | %s | %s | %s | %s |\n' $wl "$tb" "$tp" "$tr" \
			"$(ratio "$tp" "$tb")" "$(ratio "$tr" "$tb")" "$(ratio "$tr" "$tp")" "$lp" "$lr" \
			"$(mb "$sp")" "$(mb "$sr")" "$(ratio "$sr" "$sp")"
	done
	echo
	echo "(lost = events in PERF_RECORD_LOST plus samples in PERF_RECORD_LOST_SAMPLES over all runs, read back with perf.)"
	echo
;; esac

case " $BENCH " in *" synth "*)
	echo "## Synthesis of every process (-t), average usec per event, by thread count"
	echo
	perf bench internals synthesize -t > "$D/perf-synth.txt" 2>&1
	$P bench synthesize -t > "$D/precord-synth.txt" 2>&1
	printf '| threads | perf usec/event | precord usec/event | precord/perf |\n|---|---|---|---|\n'
	awk '/Number of synthesis threads:/ { t = $NF } /Average time per event/ { print t, $(NF-1) }' "$D/perf-synth.txt" > "$D/ps"
	awk '/Number of synthesis threads:/ { t = $NF } /Average time per event/ { print t, $(NF-1) }' "$D/precord-synth.txt" > "$D/rs"
	join "$D/ps" "$D/rs" | while read -r t a b; do
		printf '| %s | %s | %s | %s |\n' "$t" "$a" "$b" "$(ratio "$b" "$a")"
	done
	echo
;; esac

for extra in bench/lossless.sh bench/offcpu.sh bench/report.sh bench/daemon_cost.sh bench/daemon.sh; do
	name=$(basename "$extra" .sh)
	case " $BENCH " in *" $name "*) [ -f "$extra" ] && . "./$extra" ;; esac
done
