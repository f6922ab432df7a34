#!/bin/sh
# preport's other outputs against perf's: --folded against stacks folded from `perf script` the
# way stackcollapse-perf.pl folds them, --flamegraph as a well-formed SVG holding the hot
# functions, --stats against `perf report --stats` (record counts by type and per event).
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/mixed" ] || fail "the mixed workload is missing (make test-bins)"

perf record -q -z -e cpu-clock --call-graph dwarf -o perf.data "$W/mixed" 1 > /dev/null 2>&1 ||
	fail "perf record failed"
precord -q -e cpu-clock -o precord.data -- "$W/mixed" 0.5 > /dev/null || fail "precord failed"

for f in perf.data precord.data; do
	perf_folded "$f" > ref.folded
	preport -i "$f" --folded > pre.folded || fail "preport --folded exit $?"
	[ -s pre.folded ] || fail "$f: empty --folded output"
	LC_ALL=C sort -c pre.folded 2> /dev/null || fail "$f: --folded lines are not sorted"
	# one line per distinct stack
	dups=$(sed 's/ [0-9]*$//' pre.folded | sort | uniq -d | wc -l)
	assert_eq "$dups" 0 "$f: stacks printed twice"
	tr=$(awk '{ n += $NF } END { print n + 0 }' ref.folded)
	tp=$(awk '{ n += $NF } END { print n + 0 }' pre.folded)
	assert_eq "$tp" "$tr" "$f: samples in --folded vs perf script"
	# every stack holding 1% of the samples per perf has its line in preport, within 1% of the
	# samples; and they cover most samples.
	awk -v tot="$tr" -v what="$f" '
		FNR == NR { n = $NF; $NF = ""; pre[$0] = n; next }
		$NF >= tot / 100 {
			n = $NF; $NF = ""; main += n; checked++
			d = n - pre[$0]; if (d < 0) d = -d
			if (!($0 in pre) || d > tot / 100) { printf "%s: stack %s: perf %d, preport %d\n", what, $0, n, pre[$0]; bad = 1 }
		}
		END {
			if (checked < 4 || main < tot * 0.8) { printf "%s: main stacks cover %d of %d samples\n", what, main, tot; bad = 1 }
			exit bad
		}' pre.folded ref.folded >&2 || { head -n 8 ref.folded; fail "$f: --folded disagrees with perf script"; }
	grep -q ';main;worker;run_round;mix::lib_crunch [0-9]*$' pre.folded ||
		fail "$f: no main;worker;run_round;mix::lib_crunch stack"
	echo "ok: $f --folded: $tp samples in $(wc -l < pre.folded) stacks agree with perf script"

	preport -i "$f" --flamegraph flame.svg > flame.out || fail "preport --flamegraph exit $?"
	[ ! -s flame.out ] || fail "--flamegraph also wrote a report to stdout"
	command -v xmllint > /dev/null 2>&1 || fail "xmllint is missing: make deps installs it (libxml2-utils)"
	xmllint --noout flame.svg || fail "$f: flame graph is not well-formed XML"
	head -n 2 flame.svg | grep -q '<svg' || fail "$f: flame graph does not start an <svg>"
	tail -n 1 flame.svg | grep -q '</svg>' || fail "$f: flame graph does not end with </svg>"
	grep -q '<script' flame.svg || fail "$f: flame graph has no script (not interactive)"
	! grep -qE '(href|src)="https?:' flame.svg || fail "$f: flame graph loads from the network"
	for fn in mix::lib_crunch main_loop_work recurse 'poly_sum&lt;double&gt;' run_round; do
		grep -q ">$fn<\|$fn (" flame.svg || fail "$f: flame graph lacks $fn"
	done
	# A box is inclusive: all boxes of mix::lib_crunch (it does not recurse) add up to perf's
	# children percentage.
	pct=$(grep -o '<title>mix::lib_crunch ([0-9,]* samples, [0-9.]*%)' flame.svg |
		sed 's/.*, \([0-9.]*\)%)/\1/' | awk '{ p += $1 } END { print p + 0 }')
	want=$(rows perf report -i "$f" --stdio --children -g none --sort sym | awk '$NF == "mix::lib_crunch" { print $1 + 0 }')
	close_to "${pct:-0}" "${want:-100}" 1 || fail "$f: flame graph gives mix::lib_crunch ${pct:-?}%, perf ${want:-?}%"
	echo "ok: $f --flamegraph: well-formed, mix::lib_crunch $pct% (perf $want%)"

	# --stats: the same count for every record type and event, COMPRESSED (the containers)
	# and TOTAL included, and the same percentages: perf's lines, as printed.
	perf report -i "$f" --stats > perf.stats 2> /dev/null || fail "perf report --stats failed"
	preport -i "$f" --stats > pre.stats || fail "preport --stats exit $?"
	grep ' events: ' perf.stats > a.counts
	grep ' events: ' pre.stats > b.counts
	diff a.counts b.counts >&2 || fail "$f: --stats lines differ from perf report --stats"
	grep -q "SAMPLE events: *$tr " pre.stats || grep -q "SAMPLE events: *$tr$" pre.stats ||
		fail "$f: --stats SAMPLE count is not $tr"
	echo "ok: $f --stats: $(wc -l < b.counts) counts agree with perf report --stats"
done
echo ok
