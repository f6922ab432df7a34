# preport's --max-stack counts as perf 6.1's: at most N frames of the recorded call chain (in
# caller order, the default with children, its outermost N: perf walks it from its root, and the
# Self row stays the sampled ip's), and N more unwound from a DWARF user stack. Tables with and
# without children, sorted by perf's keys and by sym, are perf's line for line at small N, on a
# frame-pointer recording (whole chains recorded) and a DWARF one (kernel chain recorded, user
# stack unwound); the call graphs of the frame-pointer one too.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
MIXED_CPU=1 perf record -q -e cpu-clock -F 2000 -g -o fp.data -- "$W/mixed" 1 2 > /dev/null 2>&1 ||
	fail "perf record -g failed"
MIXED_CPU=1 perf record -q -e cpu-clock -F 2000 --call-graph dwarf -o dw.data -- "$W/mixed" 1 2 > /dev/null 2>&1 ||
	fail "perf record --call-graph dwarf failed"
# the table down to the first row under 0.5% (below, equal rows' order is a matter of ties)
upto() { grep -E '^ +[0-9]+\.[0-9]+%' | awk '$1 + 0 < 0.5 { exit } { print }'; }

n=0
for f in fp.data dw.data; do
	for ms in 1 3 6; do
		for o in "--children" "--no-children" "--children --sort sym" "--no-children -g caller" "--children -g callee"; do
			# shellcheck disable=SC2086
			perf report -i $f --stdio --max-stack $ms $o -g none 2> /dev/null | upto > perf.t
			# shellcheck disable=SC2086
			preport -i $f --max-stack $ms $o -g none 2> /dev/null | upto > pre.t
			[ "$(wc -l < perf.t)" -ge 3 ] || fail "$f --max-stack $ms $o: perf printed too little"
			diff perf.t pre.t || fail "$f --max-stack $ms $o: the table differs from perf's"
			n=$((n + 1))
		done
	done
done
echo "ok: $n tables as perf prints them"

# the frame-pointer recording's call graphs (caller order keeps the outermost frames)
for o in "--children -g caller" "--no-children -g caller" "--no-children -g callee"; do
	# shellcheck disable=SC2086
	perf report -i fp.data --stdio --max-stack 4 $o 2> /dev/null | grep -v '^#' | grep -v '^$' > perf.g
	# shellcheck disable=SC2086
	preport -i fp.data --max-stack 4 $o | grep -v '^#' | grep -v '^$' > pre.g
	[ "$(wc -l < perf.g)" -ge 10 ] || fail "--max-stack 4 $o: perf printed too little"
	same_graph perf.g pre.g || { diff perf.g pre.g | head -20; fail "--max-stack 4 $o: the call graph differs from perf's"; }
done

# a deeper limit than any stack changes nothing
preport -i dw.data --max-stack 1024 -g none > a.t
preport -i dw.data -g none > b.t
cmp -s a.t b.t || fail "--max-stack 1024 differs from the default on stacks under 127 frames"
echo ok
