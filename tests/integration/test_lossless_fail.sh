# A loss under --lossless is a failure: stop precord itself (watcher and readers) for 0.3 s while
# its target runs unpaused, so that the rings overflow and the kernel drops events; precord must
# then exit 124 with a loud message (even with -q), and the file must still be complete: perf
# reads it, warns of the losses and of nothing else, and counts them.
. "$(dirname "$0")/lib.sh"

# Where precord makes its pause cgroup: our own cgroup in the (first) cgroup2 mount, as
# record/lossless/pauser.c finds it; empty when there is none or the mount shows a subtree.
v2_dir() {
	awk '{ for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2" && $4 == "/") { print $5; exit } break } }' \
		/proc/self/mountinfo | while read -r m; do echo "$m$(sed -n 's/^0:://p' /proc/self/cgroup)" | sed 's|/$||'; done
}
V2=$(v2_dir)
rec=
trap '[ -n "$rec" ] && kill -CONT "$rec" 2>/dev/null; rm -rf "$T"' EXIT INT TERM

precord -q -e cpu-clock -F 20000 --call-graph dwarf -m 16 --lossless -o ours.data -- \
	"$W/spin_threads" 2 > /dev/null 2> rec.err &
rec=$!
sleep 0.5
cg=
[ -n "$V2" ] && cg=$(ls -d "$V2"/precord-$rec-* 2>/dev/null | head -n 1)
stopped=0
for i in $(seq 20); do
	kill -STOP $rec
	sleep 0.05
	# the target must be running while precord is stopped (no cgroup: signals, assume so)
	v=0
	[ -n "$cg" ] && read -r v < "$cg/cgroup.freeze"
	if [ "$v" = 0 ]; then
		stopped=1
		break
	fi
	kill -CONT $rec
	sleep 0.01
done
[ $stopped = 1 ] || fail "precord always had its target paused when stopped"
sleep 0.3
kill -CONT $rec
rc=0
wait $rec || rc=$?
rec=
cat rec.err
assert_eq "$rc" 124 "precord exit status after losing events under --lossless"
grep -q "^precord: --lossless failed: [0-9]* events were lost anyway, [0-9]* of them samples" rec.err ||
	fail "no loud message on stderr"
# Without -q, precord says at the start when a ring is too small for the rate to be safe; the
# issue's own settings (-m 64) are not.
for m in 16 64; do
	rc=0
	precord -e cpu-clock -F 20000 --call-graph dwarf -m $m --lossless -o warn.data -- true 2> warn.err || rc=$?
	# even this short a run may lose a sample or two at -m 16 (and then fail as it must)
	[ $rc = 0 ] || [ $m = 16 -a $rc = 124 ] || { cat warn.err; fail "precord --lossless -m $m on true: exit $rc"; }
	if grep -q "^precord: --lossless: above the high mark a ring has room for 0\.[0-9]* ms of samples" warn.err; then
		[ $m = 16 ] || { cat warn.err; fail "a warning about -m $m"; }
	else
		[ $m = 64 ] || { cat warn.err; fail "no warning that -m $m at 20 kHz with DWARF stacks is too small"; }
	fi
done

# perf's only complaint is about the losses themselves
perf report -i ours.data --stdio > rep.txt 2> rep.err || fail "perf report exit $?"
cat rep.err
grep -q "lost" rep.err || fail "perf report does not warn about the losses"
! grep -vE "^$|^Warning:|lost|^Check IO/CPU overload" rep.err || fail "perf report complains of more than losses"
perf report -i ours.data --stats > stats.txt 2>/dev/null
grep -E "LOST" stats.txt || fail "perf report --stats shows no loss in the file"
echo ok
