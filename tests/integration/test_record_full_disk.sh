# A disk that fills up while recording: precord says so at once, counts what it could not write
# as lost in its summary, its exit status and the file (LOST + LOST_SAMPLES records), and leaves a
# file that perf and preport read to its end, compressed or not. With --lossless the target is
# paused until there is space again (nothing lost, exit 0); stopped while waiting, what waited is
# counted lost and the target is not left paused. On a small tmpfs mounted here.
. "$(dirname "$0")/lib.sh"

mkdir full
mount -t tmpfs -o size=2m precord-test "$T/full" 2>/dev/null || skip "cannot mount a tmpfs"
trap 'umount "$T/full" 2>/dev/null || umount -l "$T/full" 2>/dev/null; rm -rf "$T"' EXIT INT TERM

# fill KB: leave the tmpfs with about KB kilobytes free.
fill() {
	rm -f full/*
	dd if=/dev/zero of=full/filler bs=1k count=$((2048 - $1)) 2>/dev/null || true
}
# summary_num FILE REGEX: the first number after REGEX in precord's summary (0 if absent).
summary_num() { sed -n "s/.*$2 *\([0-9][0-9]*\).*/\1/p" "$1" | head -1 | grep . || echo 0; }

# check WHAT RC_WANT: precord's summary, exit status, perf's and preport's view agree.
check() {
	what=$1 want_rc=$2
	assert_eq "$rc" "$want_rc" "$what: exit status"
	samples=$(sed -n 's/^\[ precord: [0-9.]* s, \([0-9]*\) samples.*/\1/p' rec.err)
	lost_rec=$(sed -n 's/^\[ precord: LOST \([0-9]*\) records, .*could not be written.*/\1/p' rec.err)
	lost_smp=$(sed -n 's/^\[ precord: LOST [0-9]* records, \([0-9]*\) of them samples.*could not be written.*/\1/p' rec.err)
	lost_rec=${lost_rec:-0} lost_smp=${lost_smp:-0}
	[ -n "$samples" ] || { cat rec.err; fail "$what: no summary"; }
	perf report -i full/p.data --stats > pstats 2> perr || { cat perr; fail "$what: perf report --stats exit $?"; }
	perf report -i full/p.data --stdio > prep 2> perr || { cat perr; fail "$what: perf report exit $?"; }
	! grep -iE "error|decompress|can't|fail" perr || fail "$what: perf report complains"
	in_file=$(awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }' pstats)
	perf_lost=$(sed -n 's/^# Total Lost Samples: //p' prep)
	perf_lost_rec=$(awk '$1 == "LOST" && $2 == "events:" { print $3; exit }' pstats)
	echo "$what: rc $rc, summary $samples samples, $lost_rec records / $lost_smp samples not written; perf: $in_file samples, $perf_lost lost"
	assert_eq "$perf_lost" "$lost_smp" "$what: lost samples, perf vs the summary"
	assert_eq "$((in_file + lost_smp))" "$samples" "$what: samples in the file + lost vs the summary's samples"
	if [ "$lost_rec" -gt 0 ]; then
		assert_eq "${perf_lost_rec:-0}" 1 "$what: LOST records in the file"
		grep -q "Processed [0-9]* events and lost 1 chunks" perr || fail "$what: perf does not warn of the LOST record"
		grep -q "^precord: cannot write full/p.data: No space left on device" rec.err || fail "$what: no message naming the full disk"
	else
		assert_eq "${perf_lost_rec:-0}" 0 "$what: LOST records in the file"
	fi
	preport -i full/p.data > rrep 2> rerr || { cat rerr; fail "$what: preport exit $?"; }
	assert_eq "$(sed -n 's/^# Total Lost Samples: //p' rrep)" "$lost_smp" "$what: lost samples, preport vs the summary"
	preport -i full/p.data --stats > rstats 2>/dev/null || fail "$what: preport --stats exit $?"
	assert_eq "$(awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }' rstats)" "$in_file" "$what: preport --stats samples"
}

# 1. Not compressed: a 2 MB tmpfs, 17 MB of samples.
rm -f full/*
rc=0; precord --no-compress -F 4000 -o full/p.data -- "$W/spin_threads" 2 > /dev/null 2> rec.err || rc=$?
check "--no-compress" 125
assert_ge "$lost_smp" 100 "--no-compress: samples not written"

# 2. Compressed: ~290 KB free (the writer keeps 256 KB for the file's end).
fill 290
rc=0; precord -F 4000 -o full/p.data -- "$W/spin_threads" 3 > /dev/null 2> rec.err || rc=$?
check "compressed" 125
assert_ge "$lost_smp" 100 "compressed: samples not written"

# 3. --lossless: paused while the disk is full, resumed when there is space; nothing lost.
fill 290
: > rec.err # the background job truncates it only once it runs: not the last case's message
precord --lossless -F 4000 -o full/p.data -- "$W/spin_threads" 6 > pid.out 2> rec.err &
prec=$!
i=0
until grep -q "pauses the target until there is space again" rec.err; do
	i=$((i + 1)); [ $i -lt 600 ] || { cat rec.err; fail "--lossless: no message about the full disk"; }
	kill -0 $prec 2>/dev/null || { cat rec.err; fail "--lossless: precord ended without waiting for space"; }
	sleep 0.05
done
sleep 1
rm full/filler
rc=0; wait $prec || rc=$?
cat rec.err
grep -q "there is space again; recording goes on" rec.err || fail "--lossless: no message when the space is back"
check "--lossless, space freed" 0
assert_eq "$lost_rec" 0 "--lossless, space freed: records not written"
paused=$(sed -n 's/.* pauses, \([0-9.]*\) s paused.*/\1/p' rec.err)
awk -v p="$paused" 'BEGIN { exit !(p >= 0.9) }' || fail "--lossless: paused $paused s while the disk was full for 1 s"

# 4. --lossless, stopped while waiting for space: what waited is lost, counted; the target is
# not left paused.
fill 290
: > rec.err
precord --lossless -F 4000 -o full/p.data -- "$W/spin_threads" 60 > pid.out 2> rec.err &
prec=$!
i=0
until grep -q "pauses the target until there is space again" rec.err; do
	i=$((i + 1)); [ $i -lt 600 ] || { cat rec.err; fail "--lossless stop: no message about the full disk"; }
	kill -0 $prec 2>/dev/null || { cat rec.err; fail "--lossless stop: precord ended without waiting for space"; }
	sleep 0.05
done
target=$(head -1 pid.out)
kill -INT $prec
rc=0; wait $prec || rc=$?
check "--lossless, stopped while full" 125
assert_ge "$lost_smp" 1 "--lossless stop: samples not written"
if [ -n "$target" ] && kill -0 "$target" 2>/dev/null; then
	state=$(awk '{ print $3 }' /proc/$target/stat)
	kill "$target" 2>/dev/null
	fail "--lossless stop: the target $target is still there (state $state)"
fi
echo ok
