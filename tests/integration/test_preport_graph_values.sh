#!/bin/sh
# perf's -g value (percent, period, count) and print_limit (the number after the threshold) as
# perf report prints them: a branch's period or number of samples rather than its share, in the
# graph, fractal (its "[...]" line too), flat and folded modes, with and without children; and
# at most print_limit branches a level (lines of a single root's run, chains of flat). On a
# frame-pointer recording (its chains recorded, the same samples on both sides, so the same
# numbers), text for text. Siblings of equal value may come in another order than perf's (see
# preport.1): fractal is asked for branches of more than half their parent's, which leaves no
# siblings; graph's, flat's and folded's 0.5% of all samples leaves no one-sample branch.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/mixed-fp" ] || fail "workloads missing (make test-bins)"

MIXED_CPU=1 perf record -q -e cpu-clock -F 2000 -g -o fp.data -- "$W/mixed-fp" 0.5 2 > /dev/null 2>&1 ||
	fail "perf record -g failed"

for g in graph,0.5,callee,function,count graph,0.5,caller,period fractal,51,callee,count \
	fractal,51,2,caller,period flat,0.5,callee,count folded,0.5,callee,period \
	graph,0.5,1,callee graph,0.5,2,caller,count fractal,51,1,callee flat,0.5,2 folded,0.5,3,count; do
	for ch in --no-children --children; do
		# (perf 6.1's "[...]" line of fractal reads a symbol it never initialised: it
		# may say "[...] (inlined)")
		perf report -i fp.data --stdio $ch -g $g 2> /dev/null | grep -vE '^$|^#' |
			sed 's/\[\.\.\.\] (inlined)$/[...]/' > perf.v
		preport -i fp.data $ch -g $g | grep -vE '^$|^#' > pre.v
		[ "$(wc -l < perf.v)" -ge 10 ] || fail "perf printed too little for -g $g $ch"
		case $g in fractal*) grep -q "\[\.\.\.\]" perf.v || fail "no [...] line for -g $g $ch" ;; esac
		case $g in
		*count* | *period*)
			grep -qE -- '--[0-9]+--|^ +[0-9]+$|^[0-9]+ ' perf.v || fail "perf printed no value for -g $g $ch" ;;
		esac
		cmp -s perf.v pre.v || { diff perf.v pre.v | head -n 20 >&2; fail "-g $g $ch: differs from perf's"; }
	done
	echo "ok: -g $g: perf's text, with and without children ($(wc -l < pre.v) lines)"
done
# the value and the limit without a mode, and bad ones
preport -i fp.data --no-children -g count,caller > /dev/null || fail "-g count,caller refused"
for bad in "graph,0.5,-1" "graph,0.5,1.5" "graph,x" "graph,0.5,callee,address"; do
	preport -i fp.data -g "$bad" > /dev/null 2> err.txt && fail "-g $bad accepted"
	grep -q "invalid call graph option '$bad'" err.txt || { cat err.txt >&2; fail "-g $bad: the message does not name it"; }
done
echo ok
