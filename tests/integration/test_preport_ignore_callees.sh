#!/bin/sh
# --ignore-callees REGEX as perf report's: in each chain the frames under the outermost function
# the regex matches are left out and the sample counts as that function's, so its callers are
# gathered in one place. On a frame-pointer recording in callee order (perf's own view of the
# option) the text is perf 6.1's, graphs included. preport applies it to DWARF-unwound chains
# too (perf 6.1 only to recorded chains) and in caller order the same way (perf's caller order
# drops the callers instead): there the matched function's Self share must be its Children
# share without the option, its callees must keep no row of their time, and the call graph
# under it must be its callers. A regex that does not compile is refused, named, exit 2.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/mixed-fp" ] && [ -x "$W/mixed" ] || fail "workloads missing (make test-bins)"

MIXED_CPU=1 perf record -q -e cpu-clock -F 2000 --call-graph fp -o fp.data -- "$W/mixed-fp" 0.5 2 \
	> /dev/null 2>&1 || fail "perf record --call-graph fp failed"
precord -q -e cpu-clock -F 2000 -o dw.data -- "$W/mixed" 0.5 2 > /dev/null 2>&1 || fail "precord failed"

for re in run_round '^(poly_sum|recurse)' 'lib_crunch|main_loop_work'; do
	for g in "" "-g callee,0.5" "-g flat" "-g folded"; do
		# shellcheck disable=SC2086
		perf report -i fp.data --stdio --no-children $g --ignore-callees "$re" 2> /dev/null | upto1 > perf.g
		# shellcheck disable=SC2086
		preport -i fp.data --no-children $g --ignore-callees "$re" | upto1 > pre.g
		[ "$(wc -l < perf.g)" -ge 3 ] || fail "perf printed too little for --ignore-callees '$re' $g"
		same_graph perf.g pre.g || { diff perf.g pre.g >&2; fail "--ignore-callees '$re' $g: differs from perf's"; }
	done
	echo "ok: fp.data: --ignore-callees '$re': the text perf prints, four graph modes"
done

# DWARF chains, both orders: run_round's Self is its Children without the option
for f in dw.data fp.data; do
	children=$(preport -i $f --children -g none --sort sym | awk '$NF == "run_round" { print $1 + 0 }')
	[ -n "$children" ] || fail "$f: no run_round row"
	for ch in --no-children --children; do
		preport -i $f $ch -g none --sort sym --ignore-callees '^run_round$' > t.txt ||
			fail "$f: preport exit $?"
		self=$(awk '$NF == "run_round" { print ($2 ~ /%$/ ? $2 : $1) + 0 }' t.txt)
		assert_eq "${self:-none}" "$children" "$f $ch: run_round's self share with --ignore-callees"
		# (a sample whose frame-pointer chain skips run_round, taken as lib_crunch set up
		# its frame, keeps a row of its own: 0.05%)
		awk '$NF == "mix::lib_crunch" && $1 + 0 >= 0.5 { bad = 1 } END { exit !bad }' t.txt &&
			{ cat t.txt; fail "$f $ch: a callee of run_round still has a row of its time"; }
	done
	for g in caller callee; do
		preport -i $f --no-children -g $g --sort sym --ignore-callees '^run_round$' > g.txt
		# the graph under run_round's row: worker and its callers, no callee
		awk '/^ +[0-9.]+% +\[\.\] run_round$/ { on = 1; next } /^ +[0-9.]+% / { on = 0 } on' g.txt > under.txt
		grep -q 'worker' under.txt || { cat g.txt; fail "$f -g $g: run_round's callers are not under it"; }
		grep -qE 'lib_crunch|main_loop_work|recurse' under.txt && { cat g.txt; fail "$f -g $g: a callee under run_round"; }
	done
	echo "ok: $f: run_round's $children% gathered as its own, callers under it, in both orders"
done
# --folded: every stack through run_round ends there
preport -i dw.data --folded --ignore-callees '^run_round$' > folded.txt
grep ';run_round;' folded.txt && fail "--folded: a stack goes on past run_round"
grep -q ';run_round ' folded.txt || fail "--folded: no stack ends at run_round"

set +e
preport -i dw.data --ignore-callees '(' > /dev/null 2> err.txt
rc=$?
set -e
assert_eq "$rc" 2 "exit status of a regex that does not compile"
grep -q "invalid --ignore-callees '('" err.txt || { cat err.txt >&2; fail "the message does not name the option"; }
echo ok
