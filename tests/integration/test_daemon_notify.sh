# precordd without systemd: READY=1 and STATUS= reach a NOTIFY_SOCKET the test owns, WATCHDOG=1
# comes at half of $WATCHDOG_USEC, the control
# socket answers status, a bad configuration is refused with its line, and SIGTERM sends
# STOPPING=1, exits 0 (how fast is bench material) and leaves the last file finalized (no .partial).
. "$(dirname "$0")/daemon_lib.sh"

# a bad file: refused before anything starts, with the line and the reason
printf 'frequency = 49\nrotate_size = 64K\nfrequency = 50\n' > bad.conf
rc=0; "$PRECORDD" --config bad.conf 2> bad.err || rc=$?
assert_eq "$rc" 78 "exit status for a bad config"
grep -q "bad.conf:3: frequency is set twice (also on line 1)" bad.err || { cat bad.err; fail "bad config message"; }
rc=0; "$PRECORDD" --check --config bad.conf 2> /dev/null || rc=$?
assert_eq "$rc" 78 "--check on a bad config"
rc=0; "$PRECORDD" --config "$T/none.conf" 2> none.err || rc=$?
[ "$rc" -ne 0 ] || fail "a missing config was accepted"
grep -q "cannot read" none.err || fail "missing config message"

"$W/spin_threads" 600 > /dev/null &
spin=$!
EXTRA_CLEANUP="kill $spin 2>/dev/null"
conf d.conf call_graph=fp frequency=199 socket_group=none rotate_size=1M max_total_size=4M
start_listener
export WATCHDOG_USEC=400000      # as WatchdogSec=0.4s would: pings every 200 ms
start_daemon d.conf
unset WATCHDOG_USEC
wait_ready
grep -q "^STATUS=recording cpu-clock at 199 Hz" "$T/notify.out" || { cat "$T/notify.out"; fail "no STATUS= with READY=1"; }
"$PRECORD" ctl -s "$T/ctl.sock" status > status.out || fail "ctl status exit $?"
grep -q "^state  *recording" status.out || { cat status.out; fail "ctl status"; }
grep -q "^current  *precord-00000001-.*\.data\.partial" status.out || { cat status.out; fail "current file"; }
# Conditions, not times: two pings come, and the target uses 0.3 s of CPU time while recorded
# (about 60 samples of each thread at 199 Hz).
pings() { [ "$(count_msgs '^WATCHDOG=1$')" -ge 2 ]; }
wait_until "two WATCHDOG=1 pings" pings
wait_cpu "$spin" 300

start=$(date +%s%N)
stop_daemon TERM
ms=$(( ($(date +%s%N) - start) / 1000000 ))
assert_eq "$DRC" 0 "precordd exit status after SIGTERM"
wait_for "$T/notify.out" "^STOPPING=1"
[ -z "$(find out -name '*.partial')" ] || fail "a .partial file is left after SIGTERM"
f=$(closed_files out | tail -1)
[ -n "$f" ] || fail "no file after SIGTERM"
perf_stats_clean "$f"
n=$(stat_count "$f" SAMPLE)
assert_ge "$n" 20 "samples in the last file"
perf_reads "$f"
echo "ok: READY, STATUS, WATCHDOG, ctl status, SIGTERM in ${ms} ms, $n samples in the last file"
