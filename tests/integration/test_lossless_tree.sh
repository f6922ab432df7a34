# --lossless pauses a target that forks and execs as a whole, and a SIGKILL of precord while the
# target is paused leaves it to finish normally. The target is a shell running pause_tree (root
# with two threads, six workers, every other one exec'd; each ticks its own counter in a shared
# file about once a millisecond) and, 0.3 s later, spin_threads burning both CPUs with 8 KiB
# stacks at 20 kHz with a high mark of 2% of a 1 MiB ring (two samples), so that
# pauses come by the hundred per second.
#   1. catch a pause (tests/tools/catch_pause): poll the cgroup's cgroup.freeze; when it says 1,
#      SIGSTOP precord (watcher and readers alike), and keep it so if it still says 1 once
#      precord is stopped (else SIGCONT and try again);
#   2. the kernel reports the cgroup frozen, and no counter of the tree moves for 200 ms;
#   3. SIGKILL precord: the guardian thaws the cgroup within ~100 ms, every counter moves again,
#      the cgroup is removed; the tree ends with status 0 once told to stop.
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
	[ -f "$T/shm" ] && printf '\001' | dd of="$T/shm" conv=notrunc 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

: > shm
truncate -s 4096 shm
# stop word at 0, nr_slots at 8, counters from 16 (struct shm in pause_tree.c)
nr_slots() { od -v -A n -t u8 -j 8 -N 8 shm | tr -d ' '; }
counters() { od -v -A n -t u8 -j 16 -N $((8 * $(nr_slots))) shm | tr -s ' \n' '  ' | sed 's/^ //;s/ $//'; }

precord -q -e cpu-clock -F 20000 --call-graph dwarf -m 256 --high-watermark 2 --low-watermark 1 --lossless -o ours.data -- \
	sh -c "$W/pause_tree $T/shm 6 & p=\$!; sleep 0.3; $W/spin_threads 6 > /dev/null; s=\$?;
	       wait \$p; echo \$s \$? > $T/status" 2> rec.err &
rec=$!
cg=
for i in $(seq 50); do
	cg=$(ls -d $V2/precord-$rec-* 2>/dev/null | head -n 1)
	[ -n "$cg" ] && break
	sleep 0.02
done
[ -n "$cg" ] || fail "no cgroup $V2/precord-$rec-*"
echo "cgroup $cg"
frozen() { while read -r k v; do [ "$k" = frozen ] && [ "$v" = 1 ] && return 0; done < "$cg/cgroup.events"; return 1; }
# every worker, the exec'd ones too, has started counting (pauses slow its start)
started() {
	[ "$(nr_slots)" -ge 8 ] || return 1
	for c in $(counters); do [ "$c" -ge 1 ] || return 1; done
}
for i in $(seq 200); do started && break; sleep 0.05; done
started || fail "the tree did not start within 10 s: $(counters)"
sleep 0.3

# 1. catch a pause (a pause lasts ~0.1 ms: a shell loop is too slow to act within one)
"$TOP/build/tools/catch_pause" "$cg" $rec 5000 || fail "could not catch precord with the target paused"
# 2. frozen as a whole: no counter moves
for i in $(seq 50); do frozen && break; sleep 0.01; done
frozen || fail "cgroup.freeze is 1 but the kernel does not report the cgroup frozen"
a=$(counters)
sleep 0.2
b=$(counters)
echo "paused:  $a"
echo "200 ms:  $b"
[ "$a" = "$b" ] || fail "a task of the tree ran while paused"
for c in $a; do assert_ge "$c" 1 "counter before the pause"; done

# 3. SIGKILL precord: the guardian thaws the tree
kill -KILL $rec
t0=$(date +%s%N)
while [ -d "$cg" ] && frozen 2>/dev/null; do :; done
thaw_us=$(( ($(date +%s%N) - t0) / 1000 ))
wait $rec 2>/dev/null || true
rec=
echo "thawed ${thaw_us} us after SIGKILL"
assert_le "$thaw_us" 150000 "microseconds from SIGKILL of precord to a thawed target"
sleep 0.2
c=$(counters)
echo "after:   $c"
set -- $c
for x in $b; do
	[ "$1" -gt "$x" ] || fail "a counter did not move after the thaw: $b -> $c"
	shift
done
for i in $(seq 100); do [ -d "$cg" ] || break; sleep 0.02; done
[ ! -d "$cg" ] || fail "cgroup $cg left behind"

printf '\001' | dd of=shm conv=notrunc 2>/dev/null
for i in $(seq 150); do [ -s status ] && break; sleep 0.1; done
[ -s status ] || fail "the target tree did not finish"
assert_eq "$(cat status)" "0 0" "exit status of spin_threads and pause_tree"
echo ok
