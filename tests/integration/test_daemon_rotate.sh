# Continuous recording with tiny files (256K): files rotate by size, the directory never holds
# more than the budget (sampled every 10 ms by dir_watch, the open file included), files stay
# near rotate_size (it is a target: a rotation overshoots by what arrives meanwhile), every
# closed file passes perf report --stats cleanly, and a restart with a smaller budget and a
# rotate_interval counts what is already there: it is within the new budget at once and after
# three rotations, and the sequence goes on.
# Counts, not rates: the test waits (however long a busy machine takes) until the daemon's
# status reports the rotations and deletions it checks, and the watcher has kept the files.
# What is recorded is the test's own process (target = pid), with 2 KiB stack copies at 199 Hz:
# about 2.3 KB per 5 ms of its CPU time, some 90 KB per 100 ms tick at most. The daemon and the
# workload share whatever CPU the machine leaves them, so what arrives between two of the
# daemon's ticks does not grow with the machine's load, as a system-wide recording's would.
. "$(dirname "$0")/daemon_lib.sh"

"$W/spin_threads" 3600 > pid.txt &
spin=$!
EXTRA_CLEANUP="kill $spin 2>/dev/null; [ -z \"\${WPID:-}\" ] || kill \$WPID 2>/dev/null"
wait_until "spin_threads' pid" has_line pid.txt
rec="target=pid:$spin call_graph=dwarf,2048 unwind=no compression=0 frequency=199 socket_group=none"
# watch BUDGET: dir_watch on out/ in the background (files kept in seen/) until stop_watch
watch() { "$TOOLS/dir_watch" out "$1" 3600 seen > watch.out 2> watch.err & WPID=$!; }
# stop_watch: stop it; fail if the directory ever went over its budget
stop_watch() {
	kill -TERM "$WPID"
	_rc=0; wait "$WPID" || _rc=$?
	WPID=
	cat watch.err >&2
	[ "$_rc" = 0 ] || { cat watch.out; grep -E "rotated|deleted" "$T/daemon.log"; fail "the directory went over the budget (dir_watch exit $_rc)"; }
}
# phase1_done: 5 rotations, a deletion and 4 closed files kept; a budget overrun ends the wait
phase1_done() {
	! grep -q "> budget" watch.err || stop_watch
	_st=$("$PRECORD" ctl -s "$T/ctl.sock" status) || return 1
	[ "$(echo "$_st" | awk '$1 == "rotations" { print $2 }')" -ge 5 ] &&
		[ "$(echo "$_st" | awk '$1 == "deleted" { print $2 }')" -ge 1 ] &&
		[ "$(ls seen | wc -l)" -ge 4 ]
}
budget=786432
conf d.conf $rec rotate_size=256K max_total_size=768K
start_listener
start_daemon d.conf
wait_ready
mkdir seen
watch "$budget"
# rotations by size only (rotate_interval is an hour), deletions to keep the budget, and files
# the watcher saw closed before they were deleted
wait_until "5 rotations, a deletion and 4 closed files kept" phase1_done
stop_watch
read -r _ max _ samples _ _ _ nkept < watch.out
"$PRECORD" ctl -s "$T/ctl.sock" status > status.out
rot=$(awk '$1 == "rotations" { print $2 }' status.out)
del=$(awk '$1 == "deleted" { print $2 }' status.out)
stop_daemon TERM
assert_eq "$DRC" 0 "exit status"
for f in out/precord-*.data; do [ -e "seen/${f#out/}" ] || ln "$f" seen/; done
nfiles=0
last=$(closed_files seen | tail -1)
for f in $(closed_files seen); do
	perf_stats_clean "$f"
	s=$(stat -c %s "$f")
	assert_le "$s" 327680 "size of $f (rotate_size 256K, plus a quarter)"
	# rotated by size (but the last, closed by SIGTERM): the daemon waits for an eighth of
	# rotate_size of its own data
	[ "$f" = "$last" ] || assert_ge "$s" 32768 "size of $f (rotated by size only)"
	nfiles=$((nfiles + 1))
done
assert_ge "$nfiles" 4 "closed files checked"
first_seq=$(closed_files out | tail -1 | sed 's/.*precord-0*\([0-9]*\)-.*/\1/')

# restart with half the budget: the old files count from the start, and files now rotate by
# time too (300 ms) within it
conf d2.conf $rec rotate_size=256K rotate_interval=300ms max_total_size=512K
ready=$(count_msgs '^READY=1')
start_daemon d2.conf
wait_msgs '^READY=1' $((ready + 1))
b=$(dir_bytes out)
assert_le "$b" 524288 "bytes on disk right after a restart with a 512K budget"
wait_status rotations 3
b=$(dir_bytes out)
assert_le "$b" 524288 "bytes on disk after three more rotations"
stop_daemon TERM
assert_eq "$DRC" 0 "exit status"
next_seq=$(closed_files out | tail -1 | sed 's/.*precord-0*\([0-9]*\)-.*/\1/')
assert_ge "$next_seq" $((first_seq + 4)) "sequence number after the restart and three rotations"
echo "ok: $rot rotations, $del deleted, at most $max of $budget bytes ($samples directory samples, $nkept kept), $nfiles files clean"
