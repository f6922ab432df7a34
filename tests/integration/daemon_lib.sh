# Sourced by the precordd integration tests (after lib.sh conventions): a notify listener
# standing in for systemd, a daemon started with NOTIFY_SOCKET pointing at it, waits on its
# messages, and the size of what it keeps on disk. Everything started is stopped at exit.
. "$(dirname "$0")/lib.sh"
PRECORDD="$TOP/precordd"
PRECORD="$TOP/precord"
TOOLS="$TOP/build/tools"
[ -x "$PRECORDD" ] || skip "precordd is not built"
[ -x "$TOOLS/notify_listen" ] && [ -x "$TOOLS/ctl_raw" ] && [ -x "$TOOLS/dir_watch" ] || skip "test tools are not built (make test-bins)"
DPID= LPID= EXTRA_CLEANUP=
daemon_cleanup() {
	rc=$?
	set +e
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null
	[ -n "$LPID" ] && kill -TERM "$LPID" 2>/dev/null
	[ -n "$EXTRA_CLEANUP" ] && eval "$EXTRA_CLEANUP"
	[ -n "${KEEP_T:-}" ] || rm -rf "$T"
	exit $rc
}
trap daemon_cleanup EXIT
trap 'exit 1' INT TERM

# start_listener: notify_listen on $T/notify.sock, its output in $T/notify.out
start_listener() {
	"$TOOLS/notify_listen" "$T/notify.sock" > "$T/notify.out" 2>&1 &
	LPID=$!
	wait_until "notify_listen's socket" test -S "$T/notify.sock"
}

# start_daemon CONF [args]: precordd in the background, log in $T/daemon.log
start_daemon() {
	conf=$1; shift
	NOTIFY_SOCKET="$T/notify.sock" "$PRECORDD" -v --config "$conf" "$@" >> "$T/daemon.log" 2>&1 &
	DPID=$!
}

# Every wait below is for a condition, never for a time: a busy machine only makes it longer.
# Their bounds (a few minutes of polls, longer on a busy machine) only end a test whose
# condition never comes; run.sh's limit would, later.

# wait_for FILE PATTERN: until grep -q finds PATTERN in FILE
wait_for() {
	_wf=0
	until grep -q -- "$2" "$1" 2>/dev/null; do
		_wf=$((_wf + 1))
		if [ "$_wf" -ge 3000 ]; then
			echo "--- $1:"; cat "$1" 2>/dev/null; echo "--- daemon log:"; cat "$T/daemon.log" 2>/dev/null
			fail "no '$2' in $1 after 3000 polls"
		fi
		sleep 0.05
	done
}

# wait_ready: READY=1 from the daemon (it may already have been sent before a reload; after
# a restart, use wait_msgs)
wait_ready() { wait_for "$T/notify.out" "^READY=1"; }

# count_msgs PATTERN: messages (lines) matching in the notify output
count_msgs() { grep -c -- "$1" "$T/notify.out" 2>/dev/null || true; }
_msgs_reached() { [ "$(count_msgs "$1")" -ge "$2" ]; }
# wait_msgs PATTERN N: until N lines of the notify output match (READY=1 of a restarted daemon:
# one more than before the restart)
wait_msgs() { wait_until "$2 notify messages '$1'" _msgs_reached "$1" "$2"; }

# status_field KEY: KEY's value in `precord ctl status` now (empty if the daemon does not answer)
status_field() {
	"$PRECORD" ctl -s "$T/ctl.sock" status 2> /dev/null | awk -v k="$1" '$1 == k { print $2 }'
}
# wait_status KEY MIN: until the status's KEY (a count: rotations, deleted, samples...) is MIN.
# Polled every 0.1 s: each poll is a process, which a busy machine's test can ill afford.
wait_status() {
	_ws=0
	until _sv=$(status_field "$1"); [ "${_sv:-0}" -ge "$2" ]; do
		_ws=$((_ws + 1))
		[ "$_ws" -lt 3000 ] || { cat "$T/daemon.log"; fail "status $1 is ${_sv:-unknown}, not $2, after 3000 polls"; }
		sleep 0.1
	done
}

# stop_daemon [SIGNAL]: signal (TERM) and wait; sets DRC to its exit status
stop_daemon() {
	kill -"${1:-TERM}" "$DPID"
	DRC=0; wait "$DPID" || DRC=$?
	DPID=
}

# dir_bytes DIR: the recordings' total size (apparent bytes, as the budget counts them). By
# inode: a file renamed from .partial while find reads the directory may be listed twice.
dir_bytes() {
	find "$1" -maxdepth 1 -name 'precord-*.data*' -printf '%i %s %p\n' 2>/dev/null > "$T/dir.list"
	awk '!seen[$1]++ { s += $2 } END { print s + 0 }' "$T/dir.list"
}

# closed_files DIR: finalized recordings, oldest first
closed_files() { find "$1" -maxdepth 1 -name 'precord-*.data' | sort; }

# only_lost_warnings FILE ERR: perf's stderr ERR, reading FILE, holds nothing but its warnings of
# lost events, and those only when FILE holds the LOST or LOST_SAMPLES records they come from:
# precordd never pauses what it records, so a starved reader loses events and says so in the
# file (CI, the sanitized build: two threads spinning on both CPUs starve its readers).
only_lost_warnings() {
	awk '/^Warning:$/ || /^Check IO\/CPU overload!$/ || /^$/ ||
	     /^Processed [0-9]+ events and lost [0-9]+ chunks!$/ ||
	     /^Processed [0-9]+ samples and lost +[0-9.]+%!$/ { next } { bad = 1 } END { exit bad }' \
		"$2" || { cat "$2" >&2; fail "perf report wrote to stderr on $1"; }
	[ -s "$2" ] || return 0
	_lost=$(perf report -i "$1" --stats 2> /dev/null |
		awk '($1 == "LOST" || $1 == "LOST_SAMPLES") && $2 == "events:" { n += $3 } END { print n + 0 }')
	[ "$_lost" -gt 0 ] || { cat "$2" >&2; fail "perf warns of lost events in $1, which holds no LOST record"; }
	echo "note: $1 holds $_lost LOST records (a starved reader)"
}
# perf_stats_clean FILE: perf report --stats reads it, with only_lost_warnings
perf_stats_clean() {
	perf report -i "$1" --stats > "$T/stats.out" 2> "$T/stats.err" || { cat "$T/stats.err"; fail "perf report --stats exit $? on $1"; }
	only_lost_warnings "$1" "$T/stats.err"
	grep -q "TOTAL events" "$T/stats.out" || fail "no event totals for $1"
}
# perf_reads FILE: perf report reads it, with only_lost_warnings (lib.sh's perf_clean, for
# recordings that must lose nothing, allows no warning at all)
perf_reads() {
	perf report -i "$1" --stdio > "$T/perf-report.out" 2> "$T/perf-report.err" || fail "perf report exit $? on $1"
	only_lost_warnings "$1" "$T/perf-report.err"
}

# conf FILE KEY=VALUE...: a config with a socket and output in $T, plus the given keys
conf() {
	f=$1; shift
	{
		echo "output_dir = $T/out"
		echo "socket = $T/ctl.sock"
		for kv in "$@"; do echo "$kv" | sed 's/=/ = /'; done
	} > "$f"
}
