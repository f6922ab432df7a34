#!/bin/sh
# preport's threads change nothing but its speed: with -j 2, 3 and 4 the report, the folded
# stacks and the statistics are byte for byte those of -j 1, on a precord file of many zstd
# frames (decoded by the unwinding workers ahead of the delivering thread, which takes a batch
# whole when its worker is still decoding: src/report/session.c) and on a perf -z file (one
# stream, decoded on a thread of its own). A CPU hog runs beside the threaded reports, so that
# who gets to a frame or a batch first differs from run to run.
. "$(dirname "$0")/lib.sh"

[ -x "$W/mixed" ] || fail "the workloads are missing (make test-bins)"
command -v perf > /dev/null || skip "perf is not installed"

# each of the 4 threads runs 1 s of its own CPU time (MIXED_CPU): 40,000 samples at 10 kHz,
# however busy the machine is
MIXED_CPU=1 precord -q -e cpu-clock -F 10000 --call-graph dwarf -o precord.data -- "$W/mixed" 1 4 \
	> /dev/null || fail "precord failed"
MIXED_CPU=1 perf record -q -z -e cpu-clock -F 10000 --call-graph dwarf -o perf.data -- "$W/mixed" 1 4 \
	> /dev/null 2>&1 || fail "perf record -z failed"

hog=
stop_hog() { [ -z "$hog" ] || kill "$hog" 2> /dev/null || true; }
trap 'stop_hog; [ -n "${KEEP_T:-}" ] || rm -rf "$T"' EXIT INT TERM

for f in precord perf; do
	preport -j 1 --stats -i $f.data > $f.stats.1 2> /dev/null || fail "preport --stats -i $f.data failed"
	n=$(awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }' $f.stats.1)
	# 8 KiB stacks: 20,000 samples decode to over 160 MiB, forty of precord's frames
	assert_ge "${n:-0}" 20000 "samples in $f.data"
	stop_hog
	preport -j 1 -i $f.data > $f.txt.1 2> $f.err.1 || fail "preport -j 1 -i $f.data failed: $(cat $f.err.1)"
	preport -j 1 -g caller --folded -i $f.data > $f.folded.1 2> /dev/null ||
		fail "preport -j 1 --folded -i $f.data failed"
	[ "$(grep -c '%' $f.txt.1)" -gt 20 ] || fail "a report of $f.data with $(grep -c '%' $f.txt.1) rows"
	( while :; do :; done ) &
	hog=$!
	for j in 2 3 4; do
		preport -j $j -i $f.data > $f.txt.$j 2> $f.err.$j ||
			fail "preport -j $j -i $f.data failed: $(cat $f.err.$j)"
		cmp -s $f.txt.1 $f.txt.$j || { diff $f.txt.1 $f.txt.$j | head -20 >&2; fail "-j $j changed the report of $f.data"; }
		cmp -s $f.err.1 $f.err.$j || fail "-j $j changed the warnings on $f.data: $(cat $f.err.$j)"
		preport -j $j -g caller --folded -i $f.data > $f.folded.$j 2> /dev/null ||
			fail "preport -j $j --folded -i $f.data failed"
		cmp -s $f.folded.1 $f.folded.$j || fail "-j $j changed the folded stacks of $f.data"
		preport -j $j --stats -i $f.data > $f.stats.$j 2> /dev/null || fail "preport -j $j --stats failed"
		cmp -s $f.stats.1 $f.stats.$j || fail "-j $j changed the statistics of $f.data"
	done
	echo "$f.data: $n samples, the same with -j 1 to 4"
done
echo ok
