# precord on a command built with -fomit-frame-pointer that spends its time in a shared library
# and in the main binary: perf reads the file (compressed and not) with nothing on stderr, and
# the top user-space symbols match perf record's own recording within 3 percentage points.
. "$(dirname "$0")/lib.sh"

# perf records the very run precord records (perf follows precord into the command), so both
# files sample the same execution. Reports are restricted to the command's user-space code
# (--comm, --dsos): with two cpu-clock timers on one task each profiler also samples the
# other's interrupt handling, which lands in the kernel. hotlib runs 1.5 s of its own CPU time
# (HOTLIB_CPU), so the sample counts do not depend on the load.
for mode in compressed plain; do
	extra=""
	[ $mode = plain ] && extra="--no-compress"
	HOTLIB_CPU=1 perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o perf-ref.data -- \
		precord -q $extra -o ours.data -- "$W/hotlib" 1.5 > out.txt 2> err.txt || { rc=$?; cat err.txt; fail "precord exit $rc"; }
	[ -s out.txt ] || fail "the command's output was lost"
	perf_clean ours.data
	perf report -i ours.data --stats > stats.txt 2> stats.err || fail "perf report --stats failed"
	[ ! -s stats.err ] || { cat stats.err; fail "perf report --stats wrote to stderr ($mode)"; }
	perf script -i ours.data > script.txt 2> script.err || fail "perf script failed"
	[ ! -s script.err ] || { head script.err; fail "perf script wrote to stderr ($mode)"; }
	perf report -i ours.data --header-only > hdr.txt 2> hdr.err || fail "perf report --header-only failed"
	[ ! -s hdr.err ] || { cat hdr.err; fail "perf report --header-only wrote to stderr ($mode)"; }
	grep -q "cmdline : .*precord" hdr.txt || fail "CMDLINE feature missing ($mode)"
	grep -q "event : name = cpu-clock" hdr.txt || fail "EVENT_DESC feature missing ($mode)"
	if [ $mode = compressed ]; then
		grep -q "COMPRESSED" stats.txt || grep -q "compressed" hdr.txt || fail "no compressed records in compressed mode"
	fi

	samples=$(stat_count ours.data SAMPLE)
	assert_ge "$samples" 500 "samples of a 1.5 s busy command at 4000 Hz ($mode)"
	lost=$(stat_count ours.data LOST)
	assert_eq "$lost" 0 "LOST records ($mode)"

	for sym in hot_lib_work hot_main_work; do
		ours=$(sym_pct ours.data $sym --comm hotlib --dsos libhot.so,hotlib --percentage relative)
		ref=$(sym_pct perf-ref.data $sym --comm hotlib --dsos libhot.so,hotlib --percentage relative)
		echo "$mode $sym: precord $ours% perf $ref%"
		close_to "$ours" "$ref" 3 || fail "$sym: precord $ours% vs perf $ref% ($mode)"
		close_to "$ours" 0 5 && fail "$sym barely present ($ours%)"
	done
	# the DWARF stacks unwind through the library back to main
	perf report -i ours.data --stdio --children --sort sym -g none -q 2>/dev/null > children.txt
	main_children=$(awk '$NF == "main" && $1 ~ /%$/ { gsub("%", "", $1); print $1; exit }' children.txt)
	[ -n "$main_children" ] || fail "main not found in children view ($mode)"
	close_to "$main_children" 90 10 || fail "main's children share $main_children% < 80: stacks do not unwind ($mode)"
done

# A reader sleeps between wakeups. It used to poll the event's own fd, which reports POLLHUP at
# every poll once the task it was opened on is gone or (for some commands) from the start: the
# readers spun, thousands of passes a second. (One reader: it wakes every 100 ms, ~10 passes a
# second, whatever the load; the bound is per second of the run as precord measured it, since a
# busy machine makes the run last longer.)
precord -v --readers 1 -e cpu-clock -F 100 -o idle.data -- sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; sleep 0.3' \
	2> idle.err || { rc=$?; cat idle.err; fail "precord on a quiet command: exit $rc"; }
passes=$(sed -n 's/^\[ precord: \([0-9]*\) reader passes \]$/\1/p' idle.err)
secs=$(sed -n 's/^\[ precord: \([0-9.]*\) s, .*/\1/p' idle.err)
[ -n "$passes" ] && [ -n "$secs" ] || { cat idle.err; fail "no reader pass count or run time with -v"; }
echo "reader passes on a quiet command: $passes in $secs s"
assert_le "$passes" "$(awk -v s="$secs" 'BEGIN { printf "%d\n", 20 + 50 * s }')" "reader passes on a quiet $secs s command"
# The kernel copies dyn_size bytes of each user stack and leaves the rest of the reserved size
# as whatever the ring held a lap earlier; precord cuts each dump down to dyn_size rounded up to
# 8 bytes (nothing reads further), zeroing the rounding. Thread stacks end a few KiB above the
# sampled frames, so about half of spin_threads' samples have such a tail; perf's own file of
# the same program keeps it, stale bytes in most of them.
SPIN_CPU=1 precord -q --no-compress -e cpu-clock -F 4000 --call-graph dwarf -o tails.data -- "$W/spin_threads" 0.25 \
	> /dev/null 2> tails.err || { rc=$?; cat tails.err; fail "precord on spin_threads: exit $rc"; }
out=$("$TOP/build/tools/stack_tails" tails.data) || fail "stack_tails on precord's file: exit $?"
echo "stack tails: $out"
set -- $out
[ $# = 10 ] && [ "$1" = samples ] && [ "$3" = with_tail ] && [ "$5" = dirty ] && [ "$7" = short ] &&
	[ "$9" = wide ] || fail "stack_tails printed '$out'"
assert_ge "$8" 100 "samples whose user stack dump was cut short of the 8 KiB asked for"
assert_eq "${10}" 0 "samples whose dump is wider than dyn_size rounded up to 8 bytes"
assert_eq "$6" 0 "samples whose rounding holds stale bytes"
perf script -i tails.data > /dev/null 2> tails.perr || fail "perf script on the cut stacks failed"
[ ! -s tails.perr ] || { head tails.perr; fail "perf script wrote to stderr on the cut stacks"; }
# perf unwinds the cut dumps as it unwinds its own: the spinning function under its threads
perf report -i tails.data --stdio --no-children -g caller,0.5,callee --sort sym 2>/dev/null > tails.rep
grep -q 'start_thread' tails.rep || { head -30 tails.rep; fail "perf unwound no thread start from the cut stacks"; }
echo "ok"
