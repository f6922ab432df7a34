# --lossless pauses a target that forks and execs as a whole, and a SIGKILL of precord while the
# target is paused leaves it to finish normally. The target is a shell running pause_tree (root
# with two threads, six workers, every other one exec'd; each ticks its own counter in a shared
# file about once a millisecond) and, once every worker has counted (pause_tree says so through
# a FIFO), spin_threads burning both CPUs with 8 KiB stacks at 20 kHz with a high mark of 2% of
# a 1 MiB ring (two samples), so that pauses come by the hundred per second. spin_threads spins
# until the test creates its stop file, so that it is still spinning however long the steps
# below take on a busy machine. Nothing waits for a time:
#   1. catch a pause (tests/tools/catch_pause): poll the cgroup's cgroup.freeze; when it says 1,
#      SIGSTOP precord (watcher and readers alike), and keep it so if it still says 1 once
#      precord is stopped (else SIGCONT and try again);
#   2. the kernel reports the cgroup frozen, and no counter of the tree moves while a witness
#      outside the cgroup (a second pause_tree, same ticks) counts 200 ticks: a window measured
#      in the ticks a running task gets, not in time;
#   3. SIGKILL precord: the guardian thaws the cgroup (the time it took is printed; it depends
#      on the load, so it is not asserted), every counter moves again, the cgroup is removed;
#      the tree ends with status 0 once told to stop.
. "$(dirname "$0")/lib.sh"

# Where precord makes its pause cgroup: our own cgroup in the (first) cgroup2 mount, as
# record/lossless/pauser.c finds it; empty when there is none or the mount shows a subtree.
v2_dir() {
	awk '{ for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2" && $4 == "/") { print $5; exit } break } }' \
		/proc/self/mountinfo | while read -r m; do echo "$m$(sed -n 's/^0:://p' /proc/self/cgroup)" | sed 's|/$||'; done
}
V2=$(v2_dir)
[ -n "$V2" ] && [ -f "$V2/cgroup.procs" ] && [ -w "$V2" ] || skip "no cgroup2 hierarchy where precord can make its cgroup"

rec=
cleanup() {
	[ -n "$rec" ] && kill -KILL "$rec" 2>/dev/null
	: > "$T/stop-spin" 2>/dev/null
	for f in "$T/shm" "$T/witness"; do
		[ -f "$f" ] && printf '\001' | dd of="$f" conv=notrunc 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

# stop word at 0, nr_slots at 8, counters from 16 (struct shm in pause_tree.c)
for f in shm witness; do : > $f; truncate -s 4096 $f; done
nr_slots() { od -v -A n -t u8 -j 8 -N 8 "${1:-shm}" | tr -d ' '; }
counters() { od -v -A n -t u8 -j 16 -N $((8 * $(nr_slots "${1:-shm}"))) "${1:-shm}" | tr -s ' \n' '  ' | sed 's/^ //;s/ $//'; }
mkfifo ready

# the pause is not timed at start (2 ms allowed for): beside a CPU hog the timing could find more
# than -m 256 leaves above a 2% mark, and this -m would be refused (test_lossless_fail)
PAUSE_TREE_READY=$T/ready SPIN_STOP=$T/stop-spin PRECORD_NO_CALIBRATE=1 precord -q -e cpu-clock \
	-F 20000 --call-graph dwarf -m 256 --high-watermark 2 --low-watermark 1 --lossless -o ours.data -- \
	sh -c "$W/pause_tree $T/shm 6 & p=\$!; read x < $T/ready; $W/spin_threads 600 > /dev/null; s=\$?;
	       wait \$p; echo \$s \$? > $T/status" 2> rec.err &
rec=$!
cg=
find_cg() { cg=$(ls -d $V2/precord-$rec-* 2>/dev/null | head -n 1); [ -n "$cg" ]; }
wait_until "cgroup $V2/precord-$rec-*" find_cg
echo "cgroup $cg"
frozen() { cg_frozen "$cg"; }
# every worker, the exec'd ones too, has started counting (pauses slow its start)
started() {
	[ "$(nr_slots)" -ge 8 ] || return 1
	for c in $(counters); do [ "$c" -ge 1 ] || return 1; done
}
wait_until "the tree to start" started
# spin_threads runs (the pauses come from its samples)
spinning() {
	while read -r p; do [ "$(cat /proc/$p/comm 2>/dev/null)" = spin_threads ] && return 0; done < "$cg/cgroup.procs"
	return 1
}
wait_until "spin_threads to start" spinning

# 1. catch a pause (a pause lasts ~0.1 ms: a shell loop is too slow to act within one)
"$TOP/build/tools/catch_pause" "$cg" $rec 60000 || fail "could not catch precord with the target paused"
# 2. frozen as a whole: no counter moves while the witness counts 200 ticks
wait_until "the kernel to report the cgroup frozen (cgroup.freeze is 1)" frozen
"$W/pause_tree" "$T/witness" 0 &
witness=$!
a=$(counters)
wit() { set -- $(counters witness); echo "${1:-0}"; }
w0=$(wit)
ticked() { [ "$(wit)" -ge $((w0 + 200)) ]; }
wait_until "the witness to tick 200 times" ticked
b=$(counters)
echo "paused:  $a"
echo "witness: $(wit) ticks (from $w0)"
echo "then:    $b"
[ "$a" = "$b" ] || fail "a task of the tree ran while paused"
for c in $a; do assert_ge "$c" 1 "counter before the pause"; done
frozen || fail "the cgroup thawed while precord was stopped"

# 3. SIGKILL precord: the guardian thaws the tree
kill -KILL $rec
t0=$(date +%s%N)
thawed() { [ ! -d "$cg" ] || ! frozen; }
wait_until "the guardian to thaw the cgroup" thawed
echo "thawed $(( ($(date +%s%N) - t0) / 1000 )) us after SIGKILL (not asserted: load-dependent)"
wait $rec 2>/dev/null || true
rec=
# every counter moves again
moved() {
	set -- $(counters)
	for x in $b; do [ "$1" -gt "$x" ] || return 1; shift; done
}
wait_until "every counter of the tree to move after the thaw ($b -> $(counters))" moved
echo "after:   $(counters)"
gone() { [ ! -d "$cg" ]; }
wait_until "cgroup $cg to be removed" gone

printf '\001' | dd of=witness conv=notrunc 2>/dev/null
wait $witness || fail "witness exit $?"
: > stop-spin
printf '\001' | dd of=shm conv=notrunc 2>/dev/null
wait_until "the target tree to finish" test -s status
assert_eq "$(cat status)" "0 0" "exit status of spin_threads and pause_tree"
echo ok
