# precord ctl record from inside a pid namespace (issue 11): the pid it knows its command by
# means another process to precordd, so the request carries a pidfd and precordd records the
# right process; a bare pid from another namespace is refused, not misread.
. "$(dirname "$0")/daemon_lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root for unshare --pid"
command -v unshare > /dev/null || skip "needs unshare"
unshare --pid --fork --mount-proc true 2>/dev/null || skip "unshare --pid does not work here"
conf d.conf frequency=49 socket_group=none rotate_size=4M max_total_size=16M control_max_duration=5s
start_listener
start_daemon d.conf
wait_ready
S="$T/ctl.sock"

# the command precord ctl starts inside the namespace: its pid there is tiny (2 or 3)
unshare --pid --fork --mount-proc "$PRECORD" ctl -s "$S" record -d 3 -o ns.data -q -- "$W/spin_threads" 1 > /dev/null 2> ns.err ||
	{ cat ns.err; tail -5 "$T/daemon.log"; fail "precord ctl record inside a pid namespace (exit $?)"; }
a=$(sym_pct ns.data spin_alpha)
close_to "$a" 50 25 || fail "spin_alpha at $a% in the recording made from a pid namespace"

# a bare pid from inside the namespace: refused, with the remedy
unshare --pid --fork --mount-proc sh -c "sleep 3 & exec '$TOOLS/ctl_raw' '$S' --text 'record pid=1\n'" > raw.out 2>&1 || true
grep -q "pid namespace is not precordd's" raw.out || { cat raw.out; fail "a bare pid from another pid namespace was not refused"; }
stop_daemon
assert_eq "$DRC" 0 "precordd exit status"
echo "ok: recorded from a pid namespace by pidfd; a bare foreign pid refused"
