# A loss under --lossless is a failure: stop precord itself (watcher and readers) while its
# target runs unpaused until the target has used many times the CPU time that fills the rings,
# so that the kernel drops events; precord must then exit 124 with a loud message (even with
# -q), and the file must still be complete: perf reads it, warns of the losses and of nothing
# else, and counts them. Then what cannot be honoured at all is refused before the command runs,
# whether the settings alone say so or the pause timed at start (PRECORD_PAUSE_ALLOW_MS).
. "$(dirname "$0")/lib.sh"

# Where precord makes its pause cgroup: our own cgroup in the (first) cgroup2 mount, as
# record/lossless/pauser.c finds it; empty when there is none or the mount shows a subtree.
v2_dir() {
	awk '{ for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2" && $4 == "/") { print $5; exit } break } }' \
		/proc/self/mountinfo | while read -r m; do echo "$m$(sed -n 's/^0:://p' /proc/self/cgroup)" | sed 's|/$||'; done
}
V2=$(v2_dir)
rec=
trap '[ -n "$rec" ] && kill -CONT "$rec" 2>/dev/null; : > "$T/stop-spin"; rm -rf "$T"' EXIT INT TERM

# The target spins until told to stop (the stop file), however long the steps below take.
# (not timed at start: a slow timing beside a CPU hog would have this -m refused, below)
SPIN_STOP=$T/stop-spin PRECORD_NO_CALIBRATE=1 precord -q -e cpu-clock -F 20000 --call-graph dwarf -m 512 \
	--lossless -o ours.data -- \
	"$W/spin_threads" 600 > pid.txt 2> rec.err &
rec=$!
wait_until "the target's pid" has_line pid.txt
target=$(head -n 1 pid.txt)
# recording: the target has run 50 ms of CPU time under precord
wait_cpu "$target" 50
cg=$(cg_of "$target")
case $cg in */precord-$rec-*) ;; *) cg= ;; esac
echo "target $target, pause cgroup: ${cg:-none}"
# armed PID: a perf event fd of PID has O_ASYNC (020000) set: the backstop is armed.
armed() {
	for fd in /proc/"$1"/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in *perf_event*) ;; *) continue ;; esac
		fl=$(sed -n 's/^flags:[[:space:]]*//p' "/proc/$1/fdinfo/${fd##*/}" 2>/dev/null)
		[ -n "$fl" ] && [ $((0$fl & 8192)) != 0 ] && return 0
	done
	return 1
}
# unpaused: nothing holds the target: its cgroup is not to be frozen, the backstop is not armed
# and the target is not stopped.
unpaused() {
	v=0
	[ -z "$cg" ] || read -r v < "$cg/cgroup.freeze"
	[ "$v" = 0 ] && ! armed $rec && ! is_stopped "$target"
}
# Stop precord (all its threads) at a moment it does not hold the target paused; the target is
# paused only for a small part of the time, so a few tries do.
tries=0
while :; do
	tries=$((tries + 1))
	[ $tries -le 1000 ] || fail "precord always had its target paused when stopped"
	stop_pid $rec
	unpaused && break
	kill -CONT $rec
	running() { ! is_stopped $rec; }
	wait_until "precord to run again" running
done
echo "precord stopped with its target running (try $tries)"
# The rings hold -m 512 (2 MiB) per CPU: at 20 kHz with 8 KiB stacks, ~250 samples, 13 ms of CPU
# time per CPU. 100 ms of target CPU time per CPU is eight times that: the rings overflow.
wait_cpu "$target" $((100 * $(nproc)))
kill -CONT $rec
: > stop-spin
rc=0
wait $rec || rc=$?
rec=
cat rec.err
assert_eq "$rc" 124 "precord exit status after losing events under --lossless"
grep -q "^precord: --lossless failed: [0-9]* events were lost anyway, [0-9]* of them samples" rec.err ||
	fail "no loud message on stderr"
# What cannot be honoured is refused before the command runs (exit 2, the minimum named): an
# explicit ring too small for --lossless's headroom, and, lossless or not, a ring smaller than
# one sample. The command would create a file; it must not exist afterwards.
refused() { # WHAT MINIMUM-PAGES OPTIONS...
	what=$1 min=$2
	shift 2
	rc=0
	precord -e cpu-clock "$@" -o refused.data -- touch ran 2> refused.err || rc=$?
	[ $rc = 2 ] || { cat refused.err; fail "$what: exit $rc, not 2"; }
	[ ! -e ran ] || fail "$what: the command ran"
	grep -q "the minimum is -m $min " refused.err || { cat refused.err; fail "$what: the minimum (-m $min) is not named"; }
}
refused "--lossless -m 16 at 20 kHz" 512 -F 20000 --call-graph dwarf -m 16 --lossless
refused "--lossless -m 64 with 64 KiB stacks" 512 --call-graph dwarf,65528 -m 64 --lossless
refused "-m 8 with 64 KiB stacks" 32 --call-graph dwarf,65528 -m 8
# a user without CAP_IPC_LOCK may lock perf_event_mlock_kb per CPU plus RLIMIT_MEMLOCK: rings
# that need more are refused, naming the knobs (64 KiB stacks at 50 kHz need 32 MiB per CPU)
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	rc=0
	user_bins
	(ulimit -l 8192; setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all \
		"$UB/precord" --lossless -e cpu-clock -F 50000 --call-graph dwarf,65528 -o nobody.data \
		-- touch ran) 2> nobody.err || rc=$?
	[ $rc = 2 ] || { cat nobody.err; fail "rings above the lock limit: exit $rc, not 2"; }
	[ ! -e ran ] || fail "rings above the lock limit: the command ran"
	grep -q "may lock only [0-9]* KiB: raise kernel.perf_event_mlock_kb" nobody.err ||
		{ cat nobody.err; fail "rings above the lock limit: the knobs are not named"; }
fi
# the minimum named is accepted (not timed at start: 2 ms allowed for), and a larger high mark
# needs a larger ring
PRECORD_NO_CALIBRATE=1 precord -q -e cpu-clock -F 20000 --call-graph dwarf -m 512 --lossless \
	-o ok.data -- true || fail "--lossless -m 512 at 20 kHz (the minimum named) refused: exit $?"
refused "--lossless -m 512 with a high mark of 80%" 1024 -F 20000 --call-graph dwarf -m 512 \
	--high-watermark 80 --lossless
# A pause slower than an explicit -m leaves room for is refused too, once the pause is timed at
# start; PRECORD_PAUSE_ALLOW_MS says how slow to allow for, as if the timing had met it. 50 ms,
# the most precord allows for, so that what is timed here (slower beside a CPU hog and ASan:
# 50 ms once) cannot change the answer: 50 ms at 20 kHz need 32 MiB above a 50% mark, where
# -m 512 leaves 3.6 ms.
export PRECORD_PAUSE_ALLOW_MS=50
refused "--lossless -m 512 with 50 ms to allow for" 8192 -F 20000 --call-graph dwarf -m 512 \
	--high-watermark 50 --lossless
grep -q "cannot honour -m 512 (2048 KiB per CPU) here: pausing takes up to 50.00 ms" refused.err ||
	{ cat refused.err; fail "the refusal does not say how slow the pause is"; }
precord -q -e cpu-clock -F 20000 --call-graph dwarf -m 8192 --high-watermark 50 --lossless \
	-o ok.data -- true || fail "--lossless -m 8192 with 50 ms to allow for (the minimum named) refused: exit $?"
# -p: refused before anything touches the process, which runs on
sleep 600 &
victim=$!
rc=0
precord -e cpu-clock -F 20000 --call-graph dwarf -m 512 --lossless -o p.data -p $victim 2> p.err || rc=$?
[ $rc = 2 ] || { cat p.err; fail "-p with 50 ms to allow for: exit $rc, not 2"; }
grep -q "the minimum is -m 8192 " p.err || { cat p.err; fail "-p: the minimum is not named"; }
[ "$(awk '{ print $3 }' /proc/$victim/stat)" = S ] || fail "-p: the refused target is not left running"
kill $victim
for bad in abc 0 51 -1; do
	rc=0
	PRECORD_PAUSE_ALLOW_MS=$bad precord -e cpu-clock -m 8192 --lossless -o bad.data -- touch ran 2> bad.err || rc=$?
	[ $rc = 2 ] && [ ! -e ran ] || { cat bad.err; fail "PRECORD_PAUSE_ALLOW_MS=$bad: exit $rc"; }
	grep -q "invalid PRECORD_PAUSE_ALLOW_MS '$bad' in the environment: expected milliseconds from 0.1 to 50" bad.err ||
		{ cat bad.err; fail "PRECORD_PAUSE_ALLOW_MS=$bad: no message naming it"; }
done
unset PRECORD_PAUSE_ALLOW_MS
# perf's only complaint is about the losses themselves
perf report -i ours.data --stdio > rep.txt 2> rep.err || fail "perf report exit $?"
cat rep.err
grep -q "lost" rep.err || fail "perf report does not warn about the losses"
! grep -vE "^$|^Warning:|lost|^Check IO/CPU overload" rep.err || fail "perf report complains of more than losses"
perf report -i ours.data --stats > stats.txt 2>/dev/null
grep -E "LOST" stats.txt || fail "perf report --stats shows no loss in the file"
echo ok
