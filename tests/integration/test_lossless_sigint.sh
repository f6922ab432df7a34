#!/bin/sh
# --lossless ended by SIGINT before its command loses nothing, even when the command takes its
# time to end and its processes go on meanwhile. The command is a shell running two sched_yield
# storms at 20 kHz with 64 KiB stacks; on SIGTERM it lets them run on for a second, then ends
# them and exits 3. precord used to resume the target and wait for the command with the events
# still on: the storms ran unpaused and filled the rings (events lost, exit 124). The events now
# stop first, as perf's do, so nothing is written after the stop. Second, a command that ignores
# SIGTERM: precord says that it is left running, with its pid, and finishes the file. The paused
# time, in the summary and in the file, is at most the run.
. "$(dirname "$0")/lib.sh"

[ -x "$W/yield_storm" ] || fail "the workloads are missing (make test-bins)"
LL="--lossless -e cpu-clock -F 20000 --call-graph dwarf,65528"
rec=
cleanup() {
	[ -z "$rec" ] || kill -KILL "$rec" 2> /dev/null
	[ ! -s "$T/ig.pid" ] || kill -KILL "$(cat "$T/ig.pid")" 2> /dev/null
	[ -n "${KEEP_T:-}" ] || rm -rf "$T"
}
trap cleanup EXIT INT TERM
# interrupt NAME N: once precord ($rec) has N samples in NAME.data, SIGINT it and wait; its
# exit status in rc, its stderr (NAME.err) shown
interrupt() {
	wait_samples "$1.data" "$2" || fail "precord wrote too few samples in 120 s"
	kill -INT $rec
	rc=0
	wait $rec || rc=$?
	rec=
	cat "$1.err"
}

# On SIGTERM the command stops precord (its parent) for half a second while the spinners run
# on, then resumes it: with the events still on, their samples would fill the rings (a 64 KiB
# sample at 20 kHz fills precord's 64 MiB ring in 51 ms of a CPU) with nobody to drain them.
precord $LL -o ll.data -- sh -c '"$0" 600 & a=$!; "$0" 600 & b=$!
	trap "kill -STOP $PPID; sleep 0.5; kill -CONT $PPID; kill $a $b; exit 3" TERM
	wait' "$W/spin_threads" > /dev/null 2> ll.err &
rec=$!
interrupt ll 2000
assert_eq "$rc" 3 "exit status (the command's, once it ended)"
grep -q "^\[ precord: 0 lost \]" ll.err || fail "the summary does not say 0 lost"
perf report -i ll.data --stats > ll.stats 2> ll.perr || fail "perf report --stats exit $?"
! grep -qE "^ *LOST(_SAMPLES)? events" ll.stats || fail "perf report --stats shows losses"
assert_ge "$(stat_count ll.data SAMPLE)" 2000 "samples in the file"
# the pause in progress at the stop (the storms fill the rings) counts until the run's end, not
# through the second the command takes to end after SIGTERM
paused_within_run ll.err ll.data

# a command that ignores SIGTERM: left running, said so, the file finished
precord -e cpu-clock -o ig.data -- sh -c 'echo $$ > ig.pid; trap "" TERM; while :; do :; done' \
	> /dev/null 2> ig.err &
rec=$!
interrupt ig 100
left=$(sed -n 's/.*the command (pid \([0-9]*\)) had not ended 2 s after SIGTERM and is left running.*/\1/p' ig.err)
[ -n "$left" ] || fail "precord did not say that the command is left running"
assert_eq "$left" "$(cat ig.pid)" "the pid precord names"
kill -0 "$left" 2> /dev/null || fail "pid $left is not running"
assert_eq "$rc" 0 "exit status with the command left running"
perf_clean ig.data
echo ok
