# Signals. SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1; a changed rate takes effect in
# a new file while the one before is finalized, not lost; a changed budget applies at once
# without a new file; a bad file is refused (with its line) and the daemon records on.
# SIGKILL: only the open .partial file may be damaged (perf still reads the flushed part of an
# uncompressed one; perf 6.1 cannot decompress a file without its COMPRESSED feature, which is
# written at the end, but preport recovers it: checked last), and the next start counts it and
# goes on with the next sequence number.
# Conditions, not times: before each step the test waits for what it checks next (samples
# counted by the status, samples perf or preport can read in the open file, READY=1).
. "$(dirname "$0")/daemon_lib.sh"

"$W/spin_threads" 3600 > /dev/null &
EXTRA_CLEANUP="kill $! 2>/dev/null"
conf d.conf call_graph=fp frequency=99 socket_group=none rotate_size=64M max_total_size=256M compression=0
start_listener
start_daemon d.conf
wait_ready
wait_status samples 1

# a new rate: a new file
conf d.conf call_graph=fp frequency=499 socket_group=none rotate_size=64M max_total_size=256M compression=0
kill -HUP "$DPID"
wait_for "$T/notify.out" "^RELOADING=1"
grep -A1 "^RELOADING=1" "$T/notify.out" | grep -q "^MONOTONIC_USEC=[0-9][0-9]*$" || { cat "$T/notify.out"; fail "no MONOTONIC_USEC with RELOADING=1"; }
wait_for "$T/notify.out" "^STATUS=recording cpu-clock at 499 Hz"
assert_ge "$(count_msgs '^READY=1')" 2 "READY=1 messages (start and reload)"
first=$(closed_files out | head -1)
[ -n "$first" ] || fail "the file recorded before the reload was not finalized"
case "$first" in *precord-00000001-*) ;; *) fail "first file is $first" ;; esac
perf_stats_clean "$first"
perf evlist -v -i "$first" > ev1.out 2>&1; grep -q "sample_freq }: 99," ev1.out || { cat ev1.out; fail "first file not at 99 Hz"; }
# READY=1 came after the new file was started
"$PRECORD" ctl -s "$T/ctl.sock" status > st1.out
grep -q "^current  *precord-00000002-" st1.out || { cat st1.out; fail "no second file after the reload"; }

# a new budget only: applied, same file
conf d.conf call_graph=fp frequency=499 socket_group=none rotate_size=64M max_total_size=128M compression=0
kill -HUP "$DPID"
wait_for "$T/notify.out" "^STATUS=recording cpu-clock at 499 Hz: .* of 128.0 MiB"
"$PRECORD" ctl -s "$T/ctl.sock" status > st2.out
grep -q "^budget_bytes  *134217728" st2.out || { cat st2.out; fail "budget not applied"; }
grep -q "^current  *precord-00000002-" st2.out || { cat st2.out; fail "a budget change started a new file"; }

# a bad file: refused with its line, recording goes on
printf 'frequency = 499\nrotate_sise = 64M\n' > d.conf
kill -HUP "$DPID"
wait_for "$T/daemon.log" "reload failed, keeping the running configuration: d.conf:2: unknown key 'rotate_sise' (did you mean rotate_size?)"
kill -0 "$DPID" || fail "precordd died on a bad reload"
s1=$(status_field samples)
[ -n "$s1" ] || fail "no status after a failed reload"
wait_status samples $((s1 + 1))

# SIGKILL: the open file only, once it holds samples perf can read (the header's data size
# is published at every tick)
p="out/$(status_field current)"
perf_samples() { [ "$(stat_count "$1" SAMPLE)" -ge 1 ]; }
wait_until "samples perf reads in $p" perf_samples "$p"
stop_daemon KILL
parts=$(find out -name '*.partial' | wc -l)
assert_le "$parts" 1 ".partial files after SIGKILL"
for f in $(closed_files out); do perf_stats_clean "$f"; done
[ -f "$p" ] || { ls out; fail "the open file $p is not left as it was"; }
perf report -i "$p" --stats > kill.out 2> kill.err || fail "perf cannot read the open file's flushed part"
n=$(awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }' kill.out)
assert_ge "${n:-0}" 1 "samples perf recovers from the killed file"
before=$(ls out | wc -l)

# restart: the leftover counts, the sequence goes on
conf d.conf call_graph=fp frequency=99 socket_group=none rotate_size=64M max_total_size=256M
ready=$(count_msgs '^READY=1')
start_daemon d.conf
wait_msgs '^READY=1' $((ready + 1))
"$PRECORD" ctl -s "$T/ctl.sock" status > st4.out
grep -q "^current  *precord-00000003-" st4.out || { cat st4.out; ls out; fail "sequence after the restart"; }
files=$(awk '$1 == "files" { print $2 }' st4.out)
assert_eq "$files" $((before + 1)) "files counted after the restart (leftovers + the new one)"
stop_daemon TERM
assert_eq "$DRC" 0 "exit status"

# SIGKILL with compression on (the default): perf cannot read the open file without the
# COMPRESSED feature written at the end, but preport recovers its flushed part.
conf d.conf call_graph=fp frequency=499 socket_group=none rotate_size=64M max_total_size=256M
ready=$(count_msgs '^READY=1')
start_daemon d.conf
wait_msgs '^READY=1' $((ready + 1))
p="out/$(status_field current)"
wait_samples "$p" 1 || fail "preport finds no sample in the open file $p"
stop_daemon KILL
[ -f "$p" ] || { ls out; fail "no open file left by SIGKILL"; }
"$TOP/preport" --force --stats -i "$p" > kz.out 2> kz.err || { cat kz.err; fail "preport cannot read the killed compressed file"; }
n=$(awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }' kz.out)
assert_ge "${n:-0}" 1 "samples preport recovers from the killed compressed file"
grep -q "not closed properly" kz.err || { cat kz.err; fail "no warning about the killed recorder's file"; }
echo "ok: reloads (rate, budget, bad file), SIGKILL left $parts damaged file, restart counted $before leftovers"
