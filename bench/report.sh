# Sourced by bench/run.sh (BENCH contains "report"): perf report --stdio against preport on the
# same DWARF recording, in the same run: wall time and peak RSS (/usr/bin/time), samples/s and
# frames/s (preport -v), and the ratios. The recording: perf record -e cpu-clock -F 20000
# --call-graph dwarf -z of the mixed workload (C++, 4 threads, no frame pointers), long enough
# for REPORT_MIN_SAMPLES samples (200000 by default; the time it takes depends on how much CPU
# the workload gets). Targets: preport 3x faster with at most half the memory.
REPORT_MIN_SAMPLES=${REPORT_MIN_SAMPLES:-200000}
REPORT_SECS=${REPORT_SECS:-6}
PR=./preport

echo "## Reporting: perf report --stdio vs preport, same DWARF recording"
echo
if [ ! -x "$PR" ] || [ ! -x /usr/bin/time ] || [ ! -x "$W/mixed" ]; then
	echo "(skipped: needs ./preport, /usr/bin/time and $W/mixed)"
	echo
else
	# Record, longer each time, until the file holds enough samples (at most 4 tries).
	secs=$REPORT_SECS nsamp=0 try=0
	while [ "$nsamp" -lt "$REPORT_MIN_SAMPLES" ] && [ $try -lt 4 ]; do
		rm -f "$D/report.data"
		perf record -q -z -e cpu-clock -F 20000 --call-graph dwarf -m 8M -o "$D/report.data" \
			-- "$W/mixed" "$secs" 4 > /dev/null 2>&1
		nsamp=$(record_count "$D/report.data" SAMPLE)
		try=$((try + 1))
		[ "$nsamp" -ge "$REPORT_MIN_SAMPLES" ] ||
			secs=$(awk -v s="$secs" -v n="$nsamp" -v m="$REPORT_MIN_SAMPLES" \
				'BEGIN { printf "%.1f", (n > 0 ? s * m / n * 1.1 : s * 2) }')
	done
	lost=$(( $(lost_events "$D/report.data") + $(lost_samples "$D/report.data") ))
	echo "Recording: perf record -z -e cpu-clock -F 20000 --call-graph dwarf -- mixed $secs 4:" \
		"$nsamp samples, $lost lost, $(mb "$(size_of "$D/report.data")") MB."
	echo
	# timed NAME CMD...: wall seconds and peak RSS in MB of CMD into $NAME_t, $NAME_m.
	timed() {
		_n=$1
		shift
		/usr/bin/time -f '%e %M' -o "$D/time.out" "$@" > "$D/$_n.out" 2> "$D/$_n.err"
		eval "${_n}_t=\$(awk '{ print \$1 }' \"\$D/time.out\")"
		eval "${_n}_m=\$(awk '{ printf \"%.0f\", \$2 / 1024 }' \"\$D/time.out\")"
	}
	# preport -v: "N samples, N frames in S s (N samples/s, N frames/s) with N threads"
	rates() { sed -n 's/.*(\([0-9]*\) samples\/s, \([0-9]*\) frames\/s) with \([0-9]*\) threads.*/\1 \2 \3/p' "$1"; }
	timed perf perf report -i "$D/report.data" --stdio
	timed pr $PR -v -i "$D/report.data"
	timed pr1 $PR -v -j 1 -i "$D/report.data"
	set -- $(rates "$D/pr.err"); pr_s=${1:-?} pr_f=${2:-?} pr_j=${3:-?}
	set -- $(rates "$D/pr1.err"); pr1_s=${1:-?} pr1_f=${2:-?}
	perf_s=$(awk -v n="$nsamp" -v t="$perf_t" 'BEGIN { if (t > 0) printf "%.0f", n / t; else print "n/a" }')
	printf '| reader | wall s | peak RSS MB | samples/s | frames/s | speed-up vs perf | memory vs perf |\n'
	printf '|---|---|---|---|---|---|---|\n'
	printf '| perf report --stdio | %s | %s | %s | n/a | 1.00x | 1.00 |\n' "$perf_t" "$perf_m" "$perf_s"
	printf '| preport (%s threads) | %s | %s | %s | %s | %sx | %s |\n' "$pr_j" "$pr_t" "$pr_m" "$pr_s" "$pr_f" \
		"$(ratio "$perf_t" "$pr_t")" "$(ratio "$pr_m" "$perf_m")"
	printf '| preport -j 1 | %s | %s | %s | %s | %sx | %s |\n' "$pr1_t" "$pr1_m" "$pr1_s" "$pr1_f" \
		"$(ratio "$perf_t" "$pr1_t")" "$(ratio "$pr1_m" "$perf_m")"
	echo
	verdict=$(awk -v a="$perf_t" -v b="$pr_t" -v c="$perf_m" -v d="$pr_m" 'BEGIN {
		s = (b > 0 && a / b >= 3) ? "met" : "MISSED"; m = (c > 0 && d / c <= 0.5) ? "met" : "MISSED"
		printf "at least 3x faster: %s; at most half the peak memory: %s", s, m }')
	echo "(samples/s for perf: samples / wall time; preport's rates are from -v and leave out printing."
	echo "Targets: $verdict.)"
	echo
fi
