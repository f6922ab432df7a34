# A disk full at the start: precord fails (125) and leaves no file, and the files that were there
# as they were. A disk that fills up while recording: precord says so at once, counts what it could not write
# as lost in its summary, its exit status and the file (LOST + LOST_SAMPLES records), and leaves a
# file that perf and preport read to its end, compressed or not. With --lossless the target is
# paused until there is space again (nothing lost, exit 0); stopped while waiting, what waited is
# counted lost and the target is not left paused. On a small tmpfs mounted here. The targets
# spin for CPU time (SPIN_CPU) or until told to stop (SPIN_STOP), never for a time that a busy
# machine would shorten.
. "$(dirname "$0")/lib.sh"

mkdir full
mount -t tmpfs -o size=2m precord-test "$T/full" 2>/dev/null || skip "cannot mount a tmpfs"
trap ': > "$T/stop-spin"; umount "$T/full" 2>/dev/null || umount -l "$T/full" 2>/dev/null; rm -rf "$T"' EXIT INT TERM

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
	echo "$what: rc $rc, $lost_rec records not written"
	lost_agree "$what" full/p.data "$samples" "$lost_smp"
	perf_lost_rec=$(awk '$1 == "LOST" && $2 == "events:" { print $3; exit }' pstats)
	if [ "$lost_rec" -gt 0 ]; then
		assert_eq "${perf_lost_rec:-0}" 1 "$what: LOST records in the file"
		grep -q "Processed [0-9]* events and lost 1 chunks" perr || fail "$what: perf does not warn of the LOST record"
		grep -q "^precord: cannot write full/p.data: No space left on device" rec.err || fail "$what: no message naming the full disk"
	else
		assert_eq "${perf_lost_rec:-0}" 0 "$what: LOST records in the file"
	fi
	preport -i full/p.data --stats > rstats 2>/dev/null || fail "$what: preport --stats exit $?"
	assert_eq "$(awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }' rstats)" "$in_file" "$what: preport --stats samples"
}

# 0. Full at the start: nothing recorded, so no file (a 264-byte one used to be left, which
# neither perf nor preport could read), and the files that were there are as they were.
fill 8
rc=0; precord -o full/p.data true > /dev/null 2> rec.err || rc=$?
assert_eq "$rc" 125 "full at the start: exit status"
grep -q "^precord: cannot create full/p.data: No space left on device" rec.err || { cat rec.err; fail "full at the start: no message naming the full disk"; }
[ ! -e full/p.data ] || fail "full at the start: left full/p.data ($(stat -c %s full/p.data) bytes)"
echo kept > full/p.data
echo kept-old > full/p.data.old
rc=0; precord -o full/p.data true > /dev/null 2> rec.err || rc=$?
assert_eq "$rc" 125 "full at the start, over an old file: exit status"
assert_eq "$(cat full/p.data 2>/dev/null)" kept "full at the start: the old full/p.data"
assert_eq "$(cat full/p.data.old 2>/dev/null)" kept-old "full at the start: the old full/p.data.old"

# 1. Not compressed: a 2 MB tmpfs, 2 s of CPU time at 4 kHz: 65 MB of samples.
rm -f full/*
rc=0; SPIN_CPU=1 precord --no-compress -F 4000 -o full/p.data -- "$W/spin_threads" 1 > /dev/null 2> rec.err || rc=$?
check "--no-compress" 125
assert_ge "$lost_smp" 100 "--no-compress: samples not written"

# 2. Compressed: ~290 KB free (the writer keeps 256 KB for the file's end).
fill 290
rc=0; SPIN_CPU=1 precord -F 4000 -o full/p.data -- "$W/spin_threads" 1 > /dev/null 2> rec.err || rc=$?
check "compressed" 125
assert_ge "$lost_smp" 100 "compressed: samples not written"

# 3. --lossless: paused while the disk is full, resumed when there is space; nothing lost. The
# target is seen paused (its cgroup frozen, or stopped) while the disk is full, and precord's
# paused time covers at least the time from then until the space is freed.
# told_full: precord said the disk is full (and still runs).
told_full() {
	kill -0 $prec 2>/dev/null || { cat rec.err; fail "$what: precord ended without waiting for space"; }
	grep -q "pauses the target until there is space again" rec.err
}
fill 290
rm -f stop-spin
: > rec.err # the background job truncates it only once it runs: not the last case's message
what="--lossless"
SPIN_STOP=$T/stop-spin precord --lossless -F 4000 -o full/p.data -- "$W/spin_threads" 600 > pid.out 2> rec.err &
prec=$!
wait_until "$what: a message about the full disk" told_full
target=$(head -n 1 pid.out)
wait_until "$what: the target paused while the disk is full" paused "$target"
t0=$(date +%s%N)
c0=$(cpu_ms "$target")
paused "$target" || fail "$what: the target ran again while the disk was full"
c1=$(cpu_ms "$target")
t1=$(date +%s%N)
assert_eq "$c1" "$c0" "$what: CPU time (ms) of the paused target"
rm full/filler
# the target spins on until precord has said so (it says it at its next pass; a target that
# ended at once could end the recording before that)
told_space() {
	kill -0 $prec 2>/dev/null || { cat rec.err; fail "--lossless: precord ended without saying the space is back"; }
	grep -q "there is space again; recording goes on" rec.err
}
wait_until "--lossless: a message when the space is back" told_space
: > stop-spin
rc=0; wait $prec || rc=$?
cat rec.err
check "--lossless, space freed" 0
assert_eq "$lost_rec" 0 "--lossless, space freed: records not written"
paused=$(sed -n 's/.* pauses, \([0-9.]*\) s paused.*/\1/p' rec.err)
seen=$(( (t1 - t0) / 1000 ))
echo "--lossless: paused $paused s; seen paused for $seen us before the space was freed"
awk -v p="$paused" -v s="$seen" 'BEGIN { exit !(p * 1e6 >= s) }' ||
	fail "--lossless: paused $paused s, less than the $seen us it was seen paused with the disk full"

# 4. --lossless, stopped while paused waiting for space: what waited is lost, counted; the
# target is not left paused; the paused time is at most the run.
fill 290
rm -f stop-spin
: > rec.err
what="--lossless stop"
SPIN_STOP=$T/stop-spin precord --lossless -F 4000 -o full/p.data -- "$W/spin_threads" 600 > pid.out 2> rec.err &
prec=$!
wait_until "$what: a message about the full disk" told_full
target=$(head -1 pid.out)
wait_until "$what: the target paused while the disk is full" paused "$target"
kill -INT $prec
rc=0; wait $prec || rc=$?
check "--lossless, stopped while full" 125
assert_ge "$lost_smp" 1 "--lossless stop: samples not written"
# paused from the full disk to the stop: that pause ends with the run, not with the summary
# (counted through the stop, it came to more than the run)
cat rec.err
paused_within_run rec.err full/p.data
assert_ge "$(summary_num rec.err 'lossless via [a-z0-9-]*:')" 1 "--lossless stop: pauses"
if [ -n "$target" ] && kill -0 "$target" 2>/dev/null; then
	state=$(awk '{ print $3 }' /proc/$target/stat)
	kill "$target" 2>/dev/null
	fail "--lossless stop: the target $target is still there (state $state)"
fi
# 5. --lossless -q: the full disk is said all the same (man precord: "It says so at once"), or a
# paused target would look hung; the summary is not.
fill 290
rm -f stop-spin
: > rec.err
what="--lossless -q"
SPIN_STOP=$T/stop-spin precord -q --lossless -F 4000 -o full/p.data -- "$W/spin_threads" 600 > pid.out 2> rec.err &
prec=$!
wait_until "$what: a message about the full disk" told_full
kill -INT $prec
rc=0; wait $prec || rc=$?
cat rec.err
assert_eq "$rc" 125 "$what: exit status"
! grep -q "^\[ precord:" rec.err || fail "$what: a summary despite -q"
echo ok
