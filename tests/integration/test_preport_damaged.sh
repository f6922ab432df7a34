#!/bin/sh
# Damaged files: a recording cut at a few offsets (inside the first record, inside the data at a
# quarter and a half, inside the feature sections) is reported as damaged with the offset and the
# reason, exit 1, and with --force exit 0 and still a report of what precedes the damage. A file
# left by a recorder killed with SIGKILL (precord: a stale data size; perf: data size 0) is
# recovered with a warning. --repair writes a file that perf report reads with nothing on stderr
# and that holds every sample preport read.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/mixed" ] || fail "the mixed workload is missing (make test-bins)"

perf record -q -F 2000 -e cpu-clock --call-graph dwarf -o full.data "$W/mixed" 0.5 > /dev/null 2>&1 ||
	fail "perf record failed"
size=$(stat -c %s full.data)
doff=$(preport -i full.data --header | awk '/^# data offset/ { print $NF }')
dsize=$(preport -i full.data --header | awk '/^# data size/ { print $NF }')
dend=$((doff + dsize))
total=$(preport -i full.data --stats | awk '$1 == "SAMPLE" { print $3; exit }')
assert_ge "$total" 20 "samples in the full recording"

# samples_in FILE [ARGS]: SAMPLE count per preport --stats (exit status ignored).
samples_in() { _f=$1; shift; preport -q -i "$_f" --stats "$@" 2> /dev/null | awk '$1 == "SAMPLE" { print $3; f = 1; exit } END { if (!f) print 0 }'; }

for cut in $((doff + 40)) $((doff + dsize / 4)) $((doff + dsize / 2)) $((dend + (size - dend) / 2)); do
	head -c "$cut" full.data > cut.data
	set +e
	preport -i cut.data --no-children -g none > out.txt 2> err.txt
	rc=$?
	set -e
	assert_eq "$rc" 1 "exit status on a file cut at $cut"
	grep -q "cut.data is damaged at offset [0-9]*: " err.txt || { cat err.txt >&2; fail "cut at $cut: no damage report"; }
	at=$(sed -n 's/.*damaged at offset \([0-9]*\): .*/\1/p' err.txt)
	reason=$(sed -n 's/.*damaged at offset [0-9]*: \([^;]*\);.*/\1/p' err.txt)
	[ -n "$reason" ] || fail "cut at $cut: the damage has no reason"
	assert_le "$at" "$cut" "cut at $cut: damage offset"
	assert_ge "$at" "$doff" "cut at $cut: damage offset"
	# What precedes the damage is read: the whole data when the cut is in the features.
	n=$(samples_in cut.data --force)
	if [ "$cut" -ge "$dend" ]; then
		assert_eq "$n" "$total" "cut at $cut (in the features): samples read"
	else
		assert_le "$n" "$total" "cut at $cut: samples read"
	fi
	set +e
	preport -i cut.data --force --no-children -g none > out.txt 2> err.txt
	rc=$?
	set -e
	assert_eq "$rc" 0 "exit status with --force on a file cut at $cut"
	grep -q "damaged at offset $at: $reason" err.txt || fail "cut at $cut: --force does not report the damage"
	if [ "$n" -gt 0 ]; then
		grep -q "^# Samples: " out.txt || fail "cut at $cut: --force printed no report"
		grep -qE '^ +[0-9.]+% ' out.txt || fail "cut at $cut: --force printed no rows"
	fi

	rm -f fixed.data
	set +e
	preport -i cut.data --repair fixed.data 2> err.txt
	rc=$?
	set -e
	if [ "$n" -eq 0 ]; then
		# nothing readable: nothing written, and said so
		assert_eq "$rc" 1 "--repair of a file with no complete record"
		[ ! -e fixed.data ] || fail "--repair wrote a file with nothing in it"
		grep -q "not one complete record" err.txt || { cat err.txt >&2; fail "--repair: no reason given"; }
		echo "ok: cut at $cut: damaged at $at ($reason), nothing to repair"
		continue
	fi
	assert_eq "$rc" 0 "--repair exit status (cut at $cut)"
	perf_clean fixed.data
	assert_eq "$(stat_count fixed.data SAMPLE)" "$n" "cut at $cut: samples in the repaired file per perf"
	set +e
	preport -i fixed.data > /dev/null 2> err.txt
	rc=$?
	set -e
	assert_eq "$rc" 0 "preport on the repaired file"
	echo "ok: cut at $cut: damaged at $at ($reason); --force reads $n of $total samples; repaired"
done

# killed FILE CMD...: start CMD (a recorder of mixed 60 writing FILE) in the background and
# SIGKILL it once FILE holds at least 400 readable samples (precord syncs its header's data size
# every second; perf's file is read by scanning); then end the workload it started.
killed() {
	_file=$1
	shift
	"$@" > /dev/null 2>&1 &
	rec=$!
	wait_until "400 readable samples in $_file" has_samples "$_file" 400
	kids=$(pgrep -P "$rec" || true)
	kill -KILL "$rec"
	wait "$rec" 2> /dev/null || true
	for k in $kids; do kill "$k" 2> /dev/null || true; done
}
has_samples() {
	kill -0 "$rec" 2> /dev/null || fail "the recorder of $1 ended before it was killed"
	_n=$(samples_in "$1" --force)
	[ "${_n:-0}" -ge "$2" ]
}
killed precord-killed.data precord -q -F 1000 -e cpu-clock -o precord-killed.data -- "$W/mixed" 60
killed perf-killed.data perf record -q -F 1000 -e cpu-clock --call-graph dwarf -o perf-killed.data "$W/mixed" 60
for f in precord-killed.data perf-killed.data; do
	[ -s "$f" ] || fail "$f: the killed recorder left nothing"
	preport -i "$f" --no-children -g none --sort sym > out.txt 2> err.txt ||
		{ cat err.txt >&2; fail "$f: preport exit $? on a killed recorder's file"; }
	grep -q "warning: $f was not closed properly" err.txt || { cat err.txt >&2; fail "$f: no warning"; }
	n=$(samples_in "$f")
	assert_ge "$n" 300 "$f: samples recovered"
	pct=$(awk '$NF == "mix::lib_crunch" { print $1 + 0 }' out.txt)
	# (its rows go to the log on failure: CI under ASan once saw 15.86% on perf's file, not
	# reproduced in 4 runs beside a CPU hog nor by moving the workload between CPUs by hand)
	close_to "${pct:-0}" 40 20 || { grep -v '^$' out.txt | head -20 >&2; cat err.txt >&2
		fail "$f: mix::lib_crunch at ${pct:-0}% in the recovered report ($n samples)"; }
	preport -q -i "$f" --repair fixed.data 2> err.txt || { cat err.txt >&2; fail "$f: --repair failed"; }
	perf_clean fixed.data
	assert_eq "$(stat_count fixed.data SAMPLE)" "$n" "$f: samples in the repaired file per perf"
	VIEWS="--children -g none --sort sym" compare_reports "$f repaired" fixed.data
	echo "ok: $f: recovered $n samples with a warning; repaired into a file perf reads"
done
echo ok
