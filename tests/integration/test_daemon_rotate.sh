# Continuous recording with tiny files (256K, or 300 ms): files rotate, the directory never holds more
# than the budget (sampled every 10 ms by dir_watch, the open file included), files stay near rotate_size
# (it is a target: a rotation overshoots by what arrives meanwhile), every closed file passes
# perf report --stats cleanly, and a restart with a smaller budget counts what is already
# there: it is within the new budget at once and the sequence goes on.
. "$(dirname "$0")/daemon_lib.sh"

"$W/spin_threads" 6 > /dev/null &
EXTRA_CLEANUP="kill $! 2>/dev/null"
budget=1048576
conf d.conf call_graph=fp frequency=999 socket_group=none rotate_size=256K rotate_interval=300ms max_total_size=1M
start_listener
start_daemon d.conf
wait_ready
mkdir seen
"$TOOLS/dir_watch" out "$budget" 4 seen > watch.out || { cat watch.out; grep -E "rotated|deleted" "$T/daemon.log"; fail "the directory went over the budget of $budget bytes"; }
read -r _ max _ samples _ _ _ kept < watch.out
assert_ge "$samples" 50 "directory samples taken"
"$PRECORD" ctl -s "$T/ctl.sock" status > status.out
rot=$(awk '$1 == "rotations" { print $2 }' status.out)
del=$(awk '$1 == "deleted" { print $2 }' status.out)
assert_ge "$rot" 6 "rotations in 4 s"
assert_ge "$del" 1 "files deleted to keep the budget"
stop_daemon TERM
assert_eq "$DRC" 0 "exit status"
for f in out/precord-*.data; do [ -e "seen/${f#out/}" ] || ln "$f" seen/; done
nfiles=0
for f in $(closed_files seen); do
	perf_stats_clean "$f"
	s=$(stat -c %s "$f")
	assert_le "$s" 327680 "size of $f (rotate_size 256K, plus a quarter)"
	nfiles=$((nfiles + 1))
done
assert_ge "$nfiles" 4 "closed files checked"
first_seq=$(closed_files out | tail -1 | sed 's/.*precord-0*\([0-9]*\)-.*/\1/')

# restart with half the budget: the old files count from the start
conf d2.conf call_graph=fp frequency=999 socket_group=none rotate_size=256K rotate_interval=300ms max_total_size=512K
: > "$T/notify.out"
start_daemon d2.conf
wait_ready
b=$(dir_bytes out)
assert_le "$b" 524288 "bytes on disk right after a restart with a 512K budget"
sleep 1
b=$(dir_bytes out)
assert_le "$b" 524288 "bytes on disk after a second"
stop_daemon TERM
next_seq=$(closed_files out | tail -1 | sed 's/.*precord-0*\([0-9]*\)-.*/\1/')
assert_ge "$next_seq" $((first_seq + 1)) "sequence number after the restart"
echo "ok: $rot rotations, $del deleted, at most $max of $budget bytes ($samples samples), $nfiles files clean"
