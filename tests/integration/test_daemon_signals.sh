# Signals. SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1; a changed rate takes effect in
# a new file while the one before is finalized, not lost; a changed budget applies at once
# without a new file; a bad file is refused (with its line) and the daemon records on.
# SIGKILL: only the open .partial file may be damaged (perf still reads the flushed part of an
# uncompressed one; perf 6.1 cannot decompress a file without its COMPRESSED feature, which is
# written at the end, but preport recovers it: checked last), and the next start counts it and
# goes on with the next sequence number.
. "$(dirname "$0")/daemon_lib.sh"

"$W/spin_threads" 8 > /dev/null &
EXTRA_CLEANUP="kill $! 2>/dev/null"
conf d.conf call_graph=fp frequency=99 socket_group=none rotate_size=4M max_total_size=16M compression=0
start_listener
start_daemon d.conf
wait_ready
sleep 0.4

# a new rate: a new file
conf d.conf call_graph=fp frequency=499 socket_group=none rotate_size=4M max_total_size=16M compression=0
kill -HUP "$DPID"
wait_for "$T/notify.out" "^RELOADING=1" 3
grep -A1 "^RELOADING=1" "$T/notify.out" | grep -q "^MONOTONIC_USEC=[0-9][0-9]*$" || { cat "$T/notify.out"; fail "no MONOTONIC_USEC with RELOADING=1"; }
wait_for "$T/notify.out" "^STATUS=recording cpu-clock at 499 Hz" 3
assert_ge "$(count_msgs '^READY=1')" 2 "READY=1 messages (start and reload)"
first=$(closed_files out | head -1)
[ -n "$first" ] || fail "the file recorded before the reload was not finalized"
case "$first" in *precord-00000001-*) ;; *) fail "first file is $first" ;; esac
perf_stats_clean "$first"
perf evlist -v -i "$first" 2>/dev/null | grep -q "sample_freq }: 99," || fail "first file not at 99 Hz"
sleep 0.4
"$PRECORD" ctl -s "$T/ctl.sock" status > st1.out
grep -q "^current  *precord-00000002-" st1.out || { cat st1.out; fail "no second file after the reload"; }

# a new budget only: applied, same file
conf d.conf call_graph=fp frequency=499 socket_group=none rotate_size=4M max_total_size=8M compression=0
kill -HUP "$DPID"
wait_for "$T/notify.out" "^STATUS=recording cpu-clock at 499 Hz: .* of 8.0 MiB" 3
"$PRECORD" ctl -s "$T/ctl.sock" status > st2.out
grep -q "^budget_bytes  *8388608" st2.out || { cat st2.out; fail "budget not applied"; }
grep -q "^current  *precord-00000002-" st2.out || { cat st2.out; fail "a budget change started a new file"; }

# a bad file: refused with its line, recording goes on
printf 'frequency = 499\nrotate_sise = 4M\n' > d.conf
kill -HUP "$DPID"
wait_for "$T/daemon.log" "reload failed, keeping the running configuration: d.conf:2: unknown key 'rotate_sise' (did you mean rotate_size?)" 3
kill -0 "$DPID" || fail "precordd died on a bad reload"
s1=$(awk '$1 == "samples" { print $2 }' st2.out)
sleep 0.3
"$PRECORD" ctl -s "$T/ctl.sock" status > st3.out
s2=$(awk '$1 == "samples" { print $2 }' st3.out)
assert_ge "$s2" $((s1 + 1)) "samples after a failed reload"

# SIGKILL: the open file only
sleep 0.3
stop_daemon KILL
parts=$(find out -name '*.partial' | wc -l)
assert_le "$parts" 1 ".partial files after SIGKILL"
for f in $(closed_files out); do perf_stats_clean "$f"; done
p=$(find out -name '*.partial')
if [ -n "$p" ]; then
	perf report -i "$p" --stats > kill.out 2> kill.err || fail "perf cannot read the open file's flushed part"
	n=$(awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }' kill.out)
	assert_ge "${n:-0}" 1 "samples perf recovers from the killed file"
fi
before=$(ls out | wc -l)

# restart: the leftover counts, the sequence goes on
conf d.conf call_graph=fp frequency=99 socket_group=none rotate_size=4M max_total_size=16M
start_daemon d.conf
sleep 0.5
"$PRECORD" ctl -s "$T/ctl.sock" status > st4.out
grep -q "^current  *precord-00000003-" st4.out || { cat st4.out; ls out; fail "sequence after the restart"; }
files=$(awk '$1 == "files" { print $2 }' st4.out)
assert_eq "$files" $((before + 1)) "files counted after the restart (leftovers + the new one)"
stop_daemon TERM
assert_eq "$DRC" 0 "exit status"

# SIGKILL with compression on (the default): perf cannot read the open file without the
# COMPRESSED feature written at the end, but preport recovers its flushed part.
conf d.conf call_graph=fp frequency=499 socket_group=none rotate_size=64M max_total_size=256M
start_daemon d.conf
wait_for "$T/notify.out" "^STATUS=recording cpu-clock at 499 Hz" 5
sleep 1.2
stop_daemon KILL
p=$(find out -name '*.partial' | head -1)
[ -n "$p" ] || fail "no open file left by SIGKILL"
"$TOP/preport" --force --stats -i "$p" > kz.out 2> kz.err || { cat kz.err; fail "preport cannot read the killed compressed file"; }
n=$(awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }' kz.out)
assert_ge "${n:-0}" 1 "samples preport recovers from the killed compressed file"
grep -q "not closed properly" kz.err || { cat kz.err; fail "no warning about the killed recorder's file"; }
echo "ok: reloads (rate, budget, bad file), SIGKILL left $parts damaged file, restart counted $before leftovers"
