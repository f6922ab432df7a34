# Sourced by bench/run.sh (BENCH contains "report"): perf report --stdio against preport on the
# same DWARF recordings, in the same run: wall and CPU time and peak RSS (/usr/bin/time -v's
# fields), preport with every CPU and with -j 1, and the ratios. Two recordings of the mixed
# workload (C++ -O2, 4 threads, no frame pointers) at 20 kHz with DWARF stacks: perf record -z
# and precord (zstd, one frame per COMPRESSED record), each long enough for REPORT_MIN_SAMPLES
# samples (250000 by default; the time that takes depends on how much CPU the workload gets).
# Targets (issue 12): preport >= 10x faster than perf report, peak memory <= 0.05x perf's,
# -j 2 >= 1.6x faster than -j 1. CPU time is printed too: on a shared machine wall time also
# measures the neighbours. First, what a second thread gets done on this machine at all
# (scale_probe): a VM's two CPUs may share a core or memory bandwidth with its neighbours.
REPORT_MIN_SAMPLES=${REPORT_MIN_SAMPLES:-250000}
REPORT_SECS=${REPORT_SECS:-8}
# Each reader runs REPORT_REPS times, the three in turn (so a change in the load reaches all
# three); the table gives the medians of each column.
REPORT_REPS=${REPORT_REPS:-3}
PR=./preport

# report_record KIND FILE: record mixed until FILE holds REPORT_MIN_SAMPLES samples (4 tries).
report_record() {
	_secs=$REPORT_SECS _n=0 _try=0
	while [ "$_n" -lt "$REPORT_MIN_SAMPLES" ] && [ $_try -lt 4 ]; do
		rm -f "$2"
		if [ "$1" = perf ]; then
			perf record -q -z -e cpu-clock -F 20000 --call-graph dwarf -m 8M -o "$2" \
				-- "$W/mixed" "$_secs" 4 > /dev/null 2>&1
		else
			./precord -q -e cpu-clock -F 20000 -m 8M -o "$2" -- "$W/mixed" "$_secs" 4 \
				> /dev/null 2>&1
		fi
		_n=$(record_count "$2" SAMPLE)
		_try=$((_try + 1))
		[ "$_n" -ge "$REPORT_MIN_SAMPLES" ] ||
			_secs=$(awk -v s="$_secs" -v n="$_n" -v m="$REPORT_MIN_SAMPLES" \
				'BEGIN { printf "%.1f", (n > 0 ? s * m / n * 1.1 : s * 2) }')
	done
	nsamp=$_n
	rsecs=$_secs
}

# timed NAME CMD...: one more run of CMD: its wall s, user+sys s and peak RSS MB appended to
# $D/NAME.runs.
timed() {
	_n=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$D/time.out" "$@" > "$D/$_n.out" 2> "$D/$_n.err"
	awk '{ printf "%s %.2f %.0f\n", $1, $2 + $3, $4 / 1024 }' "$D/time.out" >> "$D/$_n.runs"
}
# medians NAME: the median of each column of $D/NAME.runs into NAME_t, NAME_c, NAME_m, and the
# wall times of all runs into NAME_all.
medians() {
	for _k in 1 2 3; do
		_v=$(awk -v k=$_k '{ print $k }' "$D/$1.runs" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
		case $_k in 1) eval "${1}_t=$_v" ;; 2) eval "${1}_c=$_v" ;; 3) eval "${1}_m=$_v" ;; esac
	done
	eval "${1}_all=\"$(awk '{ printf "%s%s", (NR > 1 ? ", " : ""), $1 }' "$D/$1.runs")\""
}

# report_compare LABEL FILE: one table for FILE.
report_compare() {
	_f=$2
	lost=$(lost_all "$_f")
	echo "### $1: $nsamp samples ($rsecs s of mixed), $lost lost, $(mb "$(size_of "$_f")") MB"
	echo
	rm -f "$D/perf.runs" "$D/pr.runs" "$D/pr1.runs"
	# The run right after perf's is slower: -j 2 took 0.30-0.31 s straight after perf report
	# (2.5 GB, and its addr2line children) had exited, 0.25-0.28 s half a second or more later
	# (precord's 282k-sample file, alternating). So perf's run is followed by a pause, and the
	# two preport runs take turns at coming first.
	for _r in $(seq "$REPORT_REPS"); do
		timed perf perf report -i "$_f" --stdio
		sleep 1
		if [ $((_r % 2)) -eq 1 ]; then
			timed pr $PR -v -i "$_f"
			timed pr1 $PR -v -j 1 -i "$_f"
		else
			timed pr1 $PR -v -j 1 -i "$_f"
			timed pr $PR -v -i "$_f"
		fi
	done
	medians perf
	medians pr
	medians pr1
	if ! cmp -s "$D/pr.out" "$D/pr1.out"; then
		echo "(preport's output differs between -j 1 and all CPUs: a bug)"
	fi
	rates() { sed -n 's/.*(\([0-9]*\) samples\/s, \([0-9]*\) frames\/s) with \([0-9]*\) threads.*/\1 \2 \3/p' "$1"; }
	set -- $(rates "$D/pr.err"); pr_s=${1:-?} pr_f=${2:-?} pr_j=${3:-?}
	set -- $(rates "$D/pr1.err"); pr1_s=${1:-?} pr1_f=${2:-?}
	printf '| reader | wall s | CPU s | peak RSS MB | samples/s | frames/s | speed-up vs perf (wall) | (CPU) | memory vs perf |\n'
	printf '|---|---|---|---|---|---|---|---|---|\n'
	printf '| perf report --stdio | %s | %s | %s | %s | n/a | 1.00x | 1.00x | 1.00 |\n' "$perf_t" "$perf_c" \
		"$perf_m" "$(awk -v n="$nsamp" -v t="$perf_t" 'BEGIN { if (t > 0) printf "%.0f", n / t; else print "n/a" }')"
	printf '| preport (%s threads) | %s | %s | %s | %s | %s | %sx | %sx | %s |\n' "$pr_j" "$pr_t" "$pr_c" "$pr_m" \
		"$pr_s" "$pr_f" "$(ratio "$perf_t" "$pr_t")" "$(ratio "$perf_c" "$pr_c")" "$(ratio "$pr_m" "$perf_m")"
	printf '| preport -j 1 | %s | %s | %s | %s | %s | %sx | %sx | %s |\n' "$pr1_t" "$pr1_c" "$pr1_m" "$pr1_s" \
		"$pr1_f" "$(ratio "$perf_t" "$pr1_t")" "$(ratio "$perf_c" "$pr1_c")" "$(ratio "$pr1_m" "$perf_m")"
	echo
	echo "(medians of $REPORT_REPS runs each; wall times: perf $perf_all; preport $pr_all; -j 1 $pr1_all)"
	echo
	verdict=$(awk -v a="$perf_t" -v b="$pr_t" -v c="$perf_m" -v d="$pr_m" -v j1="$pr1_t" 'BEGIN {
		s = (b > 0 && a / b >= 10) ? "met" : "MISSED"; m = (c > 0 && d / c <= 0.05) ? "met" : "MISSED"
		j = (b > 0 && j1 / b >= 1.6) ? "met" : "MISSED"
		printf "10x faster: %s (%.1fx); memory <= 0.05x: %s (%.3f); all CPUs vs -j 1 >= 1.6x: %s (%.2fx)",
			s, (b > 0 ? a / b : 0), m, (c > 0 ? d / c : 0), j, (b > 0 ? j1 / b : 0) }')
	echo "Targets: $verdict."
	echo
}

# scale_probe_line: what a second thread gets done on this machine (tests/workloads/scale_probe.c):
# the ceiling for -j 2 against -j 1. Medians of REPORT_REPS alternating runs of 1 and 2 threads.
scale_probe_line() {
	for _mode in alu mem; do
		rm -f "$D/sp1.runs" "$D/sp2.runs"
		_rounds=30
		[ $_mode = mem ] && _rounds=100
		for _r in $(seq "$REPORT_REPS"); do
			timed sp1 "$W/scale_probe" $_mode 1 $_rounds
			timed sp2 "$W/scale_probe" $_mode 2 $_rounds
		done
		medians sp1
		medians sp2
		_v=$(awk -v a="$sp1_t" -v b="$sp2_t" 'BEGIN { if (b > 0) printf "%.2f", 2 * a / b; else print "?" }')
		_runs="1 thread $sp1_all s, 2 threads $sp2_all s"
		if [ $_mode = alu ]; then sp_alu=$_v sp_alu_runs=$_runs; else sp_mem=$_v sp_mem_runs=$_runs; fi
	done
	echo "This machine's own ceiling for a second thread (build/workloads/scale_probe, each thread the"
	echo "same work, medians of $REPORT_REPS alternating runs): in the time of one, two threads did"
	echo "${sp_alu}x its integer work and ${sp_mem}x its memory reads (integer: $sp_alu_runs;"
	echo "memory: $sp_mem_runs)."
	echo
}

echo "## Reporting: perf report --stdio vs preport, same DWARF recordings"
echo
[ -x "$W/scale_probe" ] && scale_probe_line
if [ ! -x "$PR" ] || [ ! -x ./precord ] || [ ! -x /usr/bin/time ] || [ ! -x "$W/mixed" ]; then
	echo "(skipped: needs ./preport, ./precord, /usr/bin/time and $W/mixed)"
	echo
else
	echo "(samples/s for perf: samples / wall time; preport's rates are from -v and leave out"
	echo "printing. CPU s = user + system.)"
	echo
	report_record perf "$D/report.data"
	report_compare "perf record -z -F 20000 --call-graph dwarf -- mixed N 4" "$D/report.data"
	rm -f "$D/report.data"
	report_record precord "$D/report.data"
	report_compare "precord -F 20000 -- mixed N 4" "$D/report.data"
	rm -f "$D/report.data"
fi
