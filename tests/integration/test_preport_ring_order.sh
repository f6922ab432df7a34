#!/bin/sh
# precord's files carry a ring-order claim (src/perf/ring_order.h): one ring per CPU, each in the
# file in its own order, stepping back in time by at most what the readers measured. preport's
# time order uses it to hold about a zstd frame's records where FINISHED_ROUND alone holds two
# rounds' worth. The report must be the same with the claim as without it (the same file with
# the trailer that carries the claim spoilt, so that preport skips it), and hold less.
. "$(dirname "$0")/lib.sh"

[ -x "$W/mixed" ] && [ -x "$W/yield_storm" ] || fail "the workloads are missing (make test-bins)"
STEPS="$TOP/build/tools/ring_steps"
[ -x "$STEPS" ] || fail "build/tools/ring_steps is missing (make test-bins)"

# claimed_ns FILE: the claim's largest step back, after checking it against the file's records
# in file order (no CPU steps back further than the claim says)
claimed_ns() {
	_s=$("$STEPS" "$1") || fail "ring_steps $1 failed"
	set -- $_s
	[ "$2" -gt 1000 ] && [ "$4" -ge 2 ] || fail "ring_steps: $_s (too few records or CPUs)"
	[ "${10}" -ge 0 ] || fail "no ring-order claim: $_s"
	[ "$8" -le "${10}" ] || fail "a CPU's records step back further than the claim says: $_s"
	echo "${10}"
}
# 4 threads on every CPU: each CPU's ring fills all along
precord -q -e cpu-clock -F 20000 -o with.data -- "$W/mixed" 2 4 > /dev/null || fail "precord failed"

# the claim is in precord's trailer, whose magic ends the file: without it the trailer is not
# read (and perf never reads it)
tail -c 8 with.data | grep -q PRECTRL1 || fail "precord's file ends without its trailer"
cp with.data without.data
printf 0 | dd of=without.data bs=1 seek=$(($(stat -c %s with.data) - 1)) conv=notrunc 2> /dev/null
tail -c 8 without.data | grep -q PRECTRL0 || fail "could not spoil the trailer's magic"

for f in with without; do
	preport -v -i $f.data > $f.txt 2> $f.err || fail "preport -i $f.data failed: $(cat $f.err)"
	preport -g caller --folded -i $f.data > $f.folded 2> /dev/null || fail "preport --folded -i $f.data failed"
done
[ "$(grep -c . with.txt)" -gt 20 ] || fail "a report of $(grep -c . with.txt) lines"
cmp -s with.txt without.txt || { diff with.txt without.txt | head -20 >&2; fail "the report changed with the claim"; }
cmp -s with.folded without.folded || fail "the folded stacks changed with the claim"

held() { sed -n 's/.*time order held at most \([0-9.]*\) MiB.*/\1/p' "$1"; }
h1=$(held with.err) h0=$(held without.err)
[ -n "$h1" ] && [ -n "$h0" ] || fail "preport -v did not say what the time order held: $(cat with.err)"
awk -v a="$h1" -v b="$h0" 'BEGIN { exit !(a < b) }' ||
	fail "the time order held $h1 MiB with the claim, $h0 MiB without"
echo "held $h1 MiB with the claim, $h0 MiB without"

# The claim against the records: here, and on the storm with switch records, where a record
# written from an interrupt between another's time and its space (a step back) is likelier.
echo "claimed step back: $(claimed_ns with.data) ns (mixed)"
precord -q -e cpu-clock -F 20000 --switch-events -o storm.data -- "$W/yield_storm" 200000 4 > /dev/null ||
	fail "precord of the storm failed"
echo "claimed step back: $(claimed_ns storm.data) ns (the storm, switch records)"

# perf reads the file with the claim as it reads it without
perf report -i with.data --stats > perf-with.txt 2>&1 || fail "perf report --stats failed on precord's file"
perf report -i without.data --stats > perf-without.txt 2>&1
cmp -s perf-with.txt perf-without.txt || fail "perf reads the file differently with the claim"
echo ok
