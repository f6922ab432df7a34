# precord ctl record from inside a pid namespace (issue 11): the pid it knows its command by
# means another process to precordd, so the request carries a pidfd and precordd records the
# right process; a bare pid from another namespace is refused, not misread.
. "$(dirname "$0")/daemon_lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root for unshare --pid"
command -v unshare > /dev/null || skip "needs unshare"
unshare --pid --fork --mount-proc true 2>/dev/null || skip "unshare --pid does not work here"
conf d.conf frequency=49 socket_group=none rotate_size=4M max_total_size=16M control_max_duration=10m
start_listener
start_daemon d.conf
wait_ready
S="$T/ctl.sock"

# the command precord ctl starts inside the namespace: its pid there is tiny (2 or 3). It runs
# until it has used 0.5 s of CPU time (found from here by its unique argument), then the test
# ends it, and the recording with it.
unshare --pid --fork --mount-proc "$PRECORD" ctl -s "$S" record -o ns.data -q -- "$W/spin_threads" "3600.$$" > /dev/null 2> ns.err &
rec=$!
# killing the namespace's first process (precord ctl) ends everything in the namespace
EXTRA_CLEANUP="kill \$(pgrep -P $rec) $rec 2>/dev/null"
spin_pid() { pgrep -f "^$W/spin_threads 3600.$$" > spin.pid; }
wait_until "the command in the namespace" spin_pid
pid=$(head -1 spin.pid)
c0=$(thread_cpu "$pid")
wait_cpu "$pid" 500
c1=$(thread_cpu "$pid")
kill "$pid"
rc=0; wait "$rec" || rc=$?
[ "$rc" = 0 ] || { cat ns.err; tail -5 "$T/daemon.log"; fail "precord ctl record inside a pid namespace (exit $rc)"; }
a=$(sym_pct ns.data spin_alpha)
want=$(share_pct "$c0" "$c1" 2)
close_to "$a" "$want" 10 || fail "spin_alpha at $a% in the recording made from a pid namespace (its thread had $want% of the CPU time)"

# a bare pid from inside the namespace: refused, with the remedy
unshare --pid --fork --mount-proc sh -c "sleep 600 & exec '$TOOLS/ctl_raw' '$S' --text 'record pid=1\n'" > raw.out 2>&1 || true
grep -q "pid namespace is not precordd's" raw.out || { cat raw.out; fail "a bare pid from another pid namespace was not refused"; }
stop_daemon
assert_eq "$DRC" 0 "precordd exit status"
echo "ok: recorded from a pid namespace by pidfd; a bare foreign pid refused"
