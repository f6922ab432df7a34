#!/bin/sh
# -U/--hide-unresolved as perf report's: a sample whose own address no symbol holds counts
# nowhere (not in the Samples line, not in the percentages), and the chains of the others lose
# the frames no symbol holds. A stripped PIE whose static loop calls an exported function of a
# shared library: half of the samples are in the loop (unresolved, dropped), half in the
# library (kept, their callers main_spin, main and _start gone from the chain), on a perf
# recording and on precord's, in both views and in --folded.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
command -v cc > /dev/null 2>&1 && command -v strip > /dev/null 2>&1 || skip "cc or strip is missing"

leaf_sources
cc -O1 -fPIC -shared -o libt.so lib.c || fail "cc lib.c failed"
cc -O1 -pie -fPIE -o pie prog.c -L. -lt -Wl,-rpath,"$T" || fail "cc prog.c failed"
strip pie

perf record -q -e cpu-clock --call-graph dwarf -o perf.data ./pie > /dev/null 2> rec.err || { cat rec.err; fail "perf record failed"; }
precord -q -e cpu-clock -o precord.data ./pie > /dev/null 2>&1 || fail "precord failed"

# the samples of a --no-children table: its Samples column's sum
nsamples() { preport "$@" --no-children -g none -n | awk '/^ +[0-9.]+%/ { s += $2 } END { print s + 0 }'; }
for f in perf.data precord.data; do
	preport -i $f --no-children -g none > all.txt || fail "$f: preport exit $?"
	preport -i $f -U --no-children -g none > hid.txt || fail "$f: preport -U exit $?"
	# the loop's rows are addresses without -U, and nowhere with it
	grep -qE '\[\.\] 0x[0-9a-f]+' all.txt || fail "$f: no unresolved row to hide"
	grep -qE '0x[0-9a-f]+$' hid.txt && { cat hid.txt; fail "$f: -U shows an unresolved row"; }
	grep -q 'lib_leaf' hid.txt || fail "$f: -U hid the library's function"
	hid=$(nsamples -i $f -U)
	# a few hundred samples in each loop: -U counts the library's, not the loop's
	lib=$(preport -i $f --no-children -g none -n --sort sym | awk '$NF == "lib_leaf" { print $2 }')
	[ -n "$lib" ] && [ -n "$hid" ] || fail "$f: no sample count"
	assert_ge "$hid" "$lib" "$f: -U's samples against lib_leaf's"
	assert_le "$hid" $((lib + 50)) "$f: -U's samples against lib_leaf's (the loop's dropped)"
	# the same text as perf's, down to the first row under 1%, graphs included
	for ch in --no-children --children; do
		for g in caller callee; do
			perf report -i $f --stdio -U $ch -g $g 2> /dev/null | upto1 > perf.g
			preport -i $f -U $ch -g $g | upto1 > pre.g
			[ "$(wc -l < perf.g)" -ge 3 ] || fail "$f: perf printed too little for -U $ch -g $g"
			grep -q 'main_spin\|0x' pre.g && fail "$f: -U $ch -g $g kept an unresolved frame"
			same_graph perf.g pre.g || { diff perf.g pre.g >&2; fail "$f: -U $ch -g $g differs from perf's"; }
		done
	done
	# collapsed stacks: no "[pie]" frame, and the same samples as the table's
	preport -i $f -U --folded > folded.txt || fail "$f: preport -U --folded exit $?"
	grep -q '\[pie\]' folded.txt && fail "$f: -U --folded kept an unresolved frame"
	n=$(awk '{ s += $NF } END { print s + 0 }' folded.txt)
	assert_eq "$n" "$hid" "$f: -U --folded's samples against the table's"
	echo "ok: $f: -U keeps $hid of the samples ($lib in lib_leaf), as perf; call graphs agree"
done

# nothing to hide from a copy
preport -i precord.data -U --unwind-to copy.data > /dev/null 2> err.txt && fail "-U with --unwind-to was accepted"
[ $? -eq 2 ] || fail "-U with --unwind-to: exit status is not 2"
grep -q 'hide-unresolved' err.txt || { cat err.txt; fail "-U with --unwind-to: the message does not name -U"; }
[ ! -e copy.data ] || fail "-U with --unwind-to wrote a copy"
echo ok
