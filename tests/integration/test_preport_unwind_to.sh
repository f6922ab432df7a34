# preport --unwind-to: the copy of a DWARF recording holds call chains instead of stack copies.
# perf reads it cleanly and without unwinding (no user registers or stacks left in its attrs),
# its call graph is the one perf unwinds from the original, preport's folded stacks of the copy
# and of the original are the same text, and the copy is smaller; system-wide, it keeps only the
# side-band its samples need. Refusals: nothing to unwind
# (exit 2), a damaged file (exit 1, no copy left behind).
. "$(dirname "$0")/lib.sh"

precord -q -e cpu-clock -o orig.data -- "$W/mixed" 1 > /dev/null || fail "precord exit $?"
preport -i orig.data --unwind-to copy.data 2> u.err || { cat u.err; fail "preport --unwind-to exit $?"; }
cat u.err
perf_clean copy.data
perf evlist -v -i copy.data 2>/dev/null > evlist.txt
grep -q 'sample_type: .*CALLCHAIN' evlist.txt || { cat evlist.txt; fail "the copy's event has no call chains"; }
! grep -qE 'REGS_USER|STACK_USER' evlist.txt || { cat evlist.txt; fail "the copy still asks for user registers or stacks"; }
[ "$(stat_count copy.data SAMPLE)" = "$(stat_count orig.data SAMPLE)" ] || fail "samples: $(stat_count copy.data SAMPLE) in the copy, $(stat_count orig.data SAMPLE) recorded"

# perf: the call graph of the copy (read as recorded) is the one perf unwinds from the original,
# but for perf's inline expansion of __libc_start_main, which it makes only when unwinding
graph() { perf report -i "$1" --stdio --no-children -g caller --percent-limit 2 2>/dev/null |
	grep -v '^#' | grep -v '^$' | sed 's/__libc_start_main_impl (inlined)/__libc_start_main@@GLIBC_2.34/'; }
graph orig.data > orig.graph
graph copy.data > copy.graph
diff orig.graph copy.graph > graph.diff || { cat graph.diff; fail "perf's call graph of the copy differs"; }
grep -q 'main_loop_work' copy.graph || fail "no main_loop_work in the copy's call graph"

preport -i orig.data --folded > orig.folded 2> /dev/null || fail "preport --folded on the original"
preport -i copy.data --folded > copy.folded 2> /dev/null || fail "preport --folded on the copy"
diff orig.folded copy.folded > folded.diff || { head -20 folded.diff; fail "preport's folded stacks of the copy differ"; }
# The functions inlined at each frame (libc's start is __libc_start_main_impl, inlined into
# __libc_start_main) are there in the copy too: the copy says that its user frames were unwound
# (perf 6.1, which expands inlined functions only in stacks it unwinds itself, shows none in it).
grep -q ";__libc_start_main_impl;" copy.folded || fail "no inlined functions in the folded stacks of the copy"
perf report -i copy.data --stdio --no-children 2> /dev/null | grep -q "(inlined)" &&
	fail "perf shows inlined functions in the copy"
perf report -i copy.data --stdio --no-children > /dev/null 2>&1 || fail "perf report on the copy"
so=$(stat -c %s orig.data) sc=$(stat -c %s copy.data)
echo "sizes: original $so, copy $sc"
assert_le "$sc" "$so" "size of the copy"

# System-wide: the copy keeps the side-band its samples need, not the machine's. No mapping of
# data is left; every process with mappings in the copy has samples or forked one that has;
# short-lived commands that were never sampled are gone; the workload's report is unchanged.
precord -q -a -e cpu-clock -F 999 -o sys.data -- sh -c "\"$W/mixed\" 1 > /dev/null; for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done" ||
	fail "precord -a exit $?"
preport -i sys.data --unwind-to sys-copy.data 2> u.err || { cat u.err; fail "preport --unwind-to on a system-wide recording"; }
cat u.err
# A system-wide recording beside a busy machine may lose events (precord -a does not pause
# anything): the copy keeps the LOST records, so perf must warn exactly as it does on the
# original (the number of events it processed aside: side-band is dropped), which is nothing
# when nothing was lost.
for f in sys sys-copy; do
	perf report -i $f.data --stdio > /dev/null 2> $f.perf.raw || fail "perf report exit $? on $f.data"
	sed 's/Processed [0-9]* events and //' $f.perf.raw > $f.perf.err
done
diff sys.perf.err sys-copy.perf.err || fail "perf report warns otherwise on the system-wide copy than on the original"
[ "$(stat_count sys-copy.data SAMPLE)" = "$(stat_count sys.data SAMPLE)" ] || fail "samples: $(stat_count sys-copy.data SAMPLE) in the system-wide copy, $(stat_count sys.data SAMPLE) recorded"
perf script -i sys-copy.data --show-mmap-events --show-task-events -F pid,event 2> /dev/null > sys-copy.txt
awk '/PERF_RECORD_MMAP2/ && !/ r-xp | --xp | rwxp / { bad++ } END { exit bad > 0 }' sys-copy.txt ||
	{ grep PERF_RECORD_MMAP2 sys-copy.txt | head; fail "the copy keeps mappings of data"; }
# pids with samples; pids that forked a process (FORK ppid/ptid -> pid/tid, pid != ppid)
awk '!/PERF_RECORD/ { print $1 + 0 }' sys-copy.txt | sort -u > sampled.pids
awk '/PERF_RECORD_FORK/ { sub(/.*PERF_RECORD_FORK/, ""); gsub(/[^0-9]+/, " "); if ($1 != $3) print $3 }' sys-copy.txt | sort -u > parent.pids
awk '/PERF_RECORD_MMAP2/ { sub(/.*PERF_RECORD_MMAP2 /, ""); print $0 + 0 }' sys-copy.txt | sort -u > mapped.pids
extra=$(sort -u sampled.pids parent.pids | comm -13 - mapped.pids)
[ -z "$extra" ] || fail "the copy keeps mappings of processes with no samples and no sampled child: $extra"
nsys=$(perf script -i sys.data --show-task-events -F pid,event 2> /dev/null | grep -c 'PERF_RECORD_COMM.*true') || true
ncopy=$(grep -c 'PERF_RECORD_COMM.*true' sys-copy.txt) || true
echo "COMM records of true: $nsys recorded, $ncopy in the copy"
preport -i sys.data --comm mixed --sort pid,comm --folded > sys.folded 2> /dev/null || fail "preport --folded on the system-wide original"
preport -i sys-copy.data --comm mixed --sort pid,comm --folded > sys-copy.folded 2> /dev/null || fail "preport --folded on the system-wide copy"
grep -q main_loop_work sys-copy.folded || fail "no main_loop_work in the system-wide copy"
diff sys.folded sys-copy.folded > folded.diff || { head -20 folded.diff; fail "preport's folded stacks of mixed differ in the system-wide copy"; }

# refusals
precord -q -e cpu-clock --call-graph fp -o fp.data -- "$W/mixed-fp" 0.2 > /dev/null || fail "precord fp"
rc=0; preport -i fp.data --unwind-to fp-copy.data 2> e.txt || rc=$?
assert_eq "$rc" 2 "exit status of --unwind-to without stacks"
grep -q "no event of it has a stack copy" e.txt || { cat e.txt; fail "message of --unwind-to without stacks"; }
[ ! -e fp-copy.data ] || fail "a copy was left behind"
head -c $(( $(stat -c %s orig.data) / 2 )) orig.data > cut.data
rc=0; preport -i cut.data --unwind-to cut-copy.data 2> e.txt || rc=$?
echo "cut file: exit $rc: $(cat e.txt)"
[ "$rc" = 1 ] || [ "$rc" = 3 ] || fail "exit status of --unwind-to on a cut file: $rc"
[ ! -e cut-copy.data ] || fail "a copy of a damaged file was left behind"
echo ok
