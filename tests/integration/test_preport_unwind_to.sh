# preport --unwind-to: the copy of a DWARF recording holds call chains instead of stack copies.
# perf reads it cleanly and without unwinding (no user registers or stacks left in its attrs),
# its call graph is the one perf unwinds from the original, preport's folded stacks of the copy
# and of the original are the same text, and the copy is smaller. Refusals: nothing to unwind
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
so=$(stat -c %s orig.data) sc=$(stat -c %s copy.data)
echo "sizes: original $so, copy $sc"
assert_le "$sc" "$so" "size of the copy"

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
