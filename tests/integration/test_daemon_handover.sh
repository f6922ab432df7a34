# A finished control recording reaches its client through a pipe that precordd copies the file
# into, never as a descriptor of the file: a client that kept such a descriptor without reading
# held disk space that no budget counted, as much as it liked, by asking again and again. The
# client here asks for a recording larger than the pipe holds and never reads: it gets a FIFO,
# the file stays counted in the status (sessions_bytes) and among the sessions while the copy
# waits, a second recording is still served, and when the client leaves the daemon lets the
# file go (sessions and sessions_bytes back to 0). `precord ctl record` itself reads the pipe
# and writes what perf reads.
. "$(dirname "$0")/daemon_lib.sh"

conf d.conf frequency=4000 call_graph=dwarf compression=0 rotate_size=64M max_total_size=1G control_max_sessions=4
start_listener
start_daemon d.conf
wait_ready
S="$T/ctl.sock"

"$W/spin_threads" 3600 > spin.pid &
spin=$!
EXTRA_CLEANUP="kill -KILL $spin 2>/dev/null"

# a 0.5 s recording of a spinning process at 4 kHz with 8 KiB stacks, not compressed: megabytes,
# more than the pipe holds (1 MiB)
"$TOOLS/ctl_raw" "$S" --hold "record pid=$spin duration=500ms\n" > hold.out 2>&1 &
holder=$!
EXTRA_CLEANUP="$EXTRA_CLEANUP; kill -KILL $holder 2>/dev/null"
wait_for hold.out "<closed>"
grep -q "^OK samples=" hold.out || { cat hold.out; fail "no OK for the held recording"; }
grep -q "<fd fifo>" hold.out || { cat hold.out; fail "the recording was handed over as something other than a pipe"; }
bytes=$(sed -n 's/.* bytes=\([0-9]*\).*/\1/p' hold.out)
assert_le $((2 * 1024 * 1024)) "$bytes" "the held recording's size (it must outgrow the pipe)"

# while the client holds the pipe unread, the file is the daemon's and counted
assert_eq "$(status_field sessions)" 1 "sessions while a copy waits"
assert_le "$bytes" "$(status_field sessions_bytes)" "sessions_bytes while a copy waits"

# another recording meanwhile, read to its end by precord ctl
mkdir c
(cd c && "$PRECORD" ctl -s "$S" record -p "$spin" -d 1 -o other.data) 2> other.err || { cat other.err; fail "a recording beside the held copy"; }
perf_stats_clean c/other.data
grep -q "wrote other.data" other.err || { cat other.err; fail "precord ctl's summary"; }

# the client leaves: the copy ends, the file is freed
kill "$holder"
_released() { [ "$(status_field sessions)" = 0 ] && [ "$(status_field sessions_bytes)" = 0 ]; }
wait_until "the held copy released" _released
wait_for "$T/daemon.log" "the client left"
stop_daemon
assert_eq "$DRC" 0 "precordd exit status"
echo "handover: a pipe of $bytes bytes held, counted, released"
