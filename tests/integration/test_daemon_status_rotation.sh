# precordd answers `precord ctl status` while a rotation is in progress (issue 11: a rotation
# storm of a 5,000-thread process blocked the loop for up to 1.3 s a rotation). Rotations run
# often (64K files, every 100 ms) and are slow: each new file describes all 5,000 threads from
# /proc. status_in_rotation waits for an answer that says rotating=1, asks again at once and
# times that request from its send to its answer; an answer that still says rotating=1 was
# asked and answered during a rotation. Ten of them must each come within 1 s.
#
# The bound: 1 s is the issue's requirement. A status answer is made on the loop from the
# daemon's own counters; during a rotation it never calls into the recording (which the
# rotation thread owns), so it does not wait for any rotation work, whatever its length: what
# it takes is the loop's turn on a CPU, milliseconds even beside a CPU hog (0.1 ms measured at a
# load of 14 on 2 CPUs), against a rotation of 0.3 to 1 s there. The old loop, which rotated in
# place, could never answer during a rotation: it fails here, after 40 rotations without one.
# Then `precord ctl rotate` during the storm is answered with the file it closed.
. "$(dirname "$0")/daemon_lib.sh"
[ -x "$TOOLS/status_in_rotation" ] || skip "test tools are not built (make test-bins)"

"$W/secret_holder" threads 5000 600 > threads.out &
EXTRA_CLEANUP="kill $! 2>/dev/null"
n=1200
while [ $n -gt 0 ] && ! grep -q "^ready" threads.out; do sleep 0.05; n=$((n - 1)); done
grep -q "^ready" threads.out || skip "cannot start 5,000 threads"
conf d.conf frequency=99 call_graph=fp socket_group=none rotate_size=64K rotate_interval=100ms \
	max_total_size=2M
start_listener
start_daemon d.conf
wait_ready 30
"$TOOLS/status_in_rotation" "$T/ctl.sock" 10 40 > sir.out 2> sir.err ||
	{ cat sir.out sir.err; grep -E "rotated in" "$T/daemon.log" | tail -5; fail "status during a rotation"; }
cat sir.out
slowest=$(awk '{ print int($6) }' sir.out)
assert_le "$slowest" 999 "milliseconds to answer status during a rotation"

"$PRECORD" ctl -s "$T/ctl.sock" rotate > rot.out || { cat rot.out; fail "rotate during a storm"; }
grep -q "^closed  *precord-[0-9]*-[0-9TZ]*\.data$" rot.out || { cat rot.out; fail "rotate's answer"; }
stop_daemon TERM
assert_eq "$DRC" 0 "exit status"
echo "ok: $(cat sir.out)"
