# Continuous recording of one process (target = pid:N): after a rotation the new file describes
# the process again (its commands and maps), so its samples resolve to symbols in every file on
# its own; when the process ends, the daemon finalizes the file and idles.
. "$(dirname "$0")/daemon_lib.sh"

# The process spins until killed; each file covers 0.5 s of its CPU time (about 250 samples of
# each thread), however busy the machine is.
"$W/spin_threads" 600 > pid.txt &
spin=$!
EXTRA_CLEANUP="kill $spin 2>/dev/null"
wait_until "spin_threads' pid" has_line pid.txt
conf d.conf frequency=499 socket_group=none "target=pid:$spin" rotate_size=4M max_total_size=16M
start_listener
start_daemon d.conf
wait_ready
# the threads' CPU times at each file's start and end: spin_alpha's share of a file's samples is
# its thread's share of that time (not 50%: a busy machine may favour either thread)
c0=$(thread_cpu "$spin")
wait_cpu "$spin" 500
"$PRECORD" ctl -s "$T/ctl.sock" rotate > r1.out || fail "rotate exit $?"
c1=$(thread_cpu "$spin")
wait_cpu "$spin" 500
"$PRECORD" ctl -s "$T/ctl.sock" rotate > r2.out || fail "rotate exit $?"
c2=$(thread_cpu "$spin")
wait_cpu "$spin" 500
c3=$(thread_cpu "$spin")
kill "$spin"; wait "$spin" 2> /dev/null || true
wait_for "$T/notify.out" "idle: the recorded processes ended"
n=0
for f in $(closed_files out); do
	perf_stats_clean "$f"
	perf_reads "$f"
	a=$(sym_pct "$f" spin_alpha)
	case $n in 0) want=$(share_pct "$c0" "$c1" 2) ;; 1) want=$(share_pct "$c1" "$c2" 2) ;; *) want=$(share_pct "$c2" "$c3" 2) ;; esac
	close_to "$a" "$want" 15 || fail "spin_alpha at $a% in $f (its thread had $want% of the CPU time)"
	n=$((n + 1))
done
assert_eq "$n" 3 "files (two rotations, then the end of the process)"
[ -z "$(find out -name '*.partial')" ] || fail "a .partial is left after the process ended"
stop_daemon TERM
assert_eq "$DRC" 0 "exit status"
echo "ok: $n files of pid $spin, each resolving spin_alpha on its own"
