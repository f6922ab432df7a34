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
# The table down to the first row under 0.5% (below, equal rows' order is a matter of ties), rows
# of one name merged: with inlined frames among the Children rows perf 6.1's hist tree, which
# compares an inlined row's symbol by name and any other by address, now and then holds one
# function in two rows (__libc_start_main_impl (inlined) as 34.07% and 0.02% where it has 34.09%
# in every time slice of the file); preport keeps one. Each row is "PARTS<TAB>PCT...<TAB>NAME",
# PARTS the rows merged into it, at the place of the first.
upto() {
	grep -E '^ +[0-9]+\.[0-9]+%' | awk '
		{ k = $0; np = 0
		  while (match(k, /^ *[0-9]+\.[0-9]+%/)) { p[++np] = substr(k, RSTART, RLENGTH) + 0; k = substr(k, RSTART + RLENGTH) }
		  if (!(k in parts)) { order[++n] = k; cols[k] = np }
		  parts[k]++
		  for (i = 1; i <= np; i++) sum[k, i] += p[i] }
		END { for (r = 1; r <= n; r++) { k = order[r]
			if (sum[k, 1] < 0.5) exit
			line = parts[k] "\t"
			for (i = 1; i <= cols[k]; i++) line = line sprintf("%.2f ", sum[k, i])
			print line "\t" k } }'
}
# same_rows PERF PRE: the same names in the same order, each percentage perf's, or within the
# rounding of its parts where either side merged rows
same_rows() {
	awk -F '\t' 'FNR == NR { a[FNR] = $0; na = FNR; next }
		{ split(a[FNR], x, "\t"); if (x[3] != $3) exit 1
		  nx = split(x[2], px, " "); ny = split($2, py, " "); if (nx != ny) exit 1
		  tol = (x[1] == 1 && $1 == 1) ? 0 : 0.005 * (x[1] + $1) + 0.0001
		  for (i = 1; i <= nx; i++) { d = px[i] - py[i]; if (d < 0) d = -d; if (d > tol) exit 1 } }
		END { if (FNR != na) exit 1 }' "$1" "$2"
}

n=0
for f in fp.data dw.data; do
	for ms in 1 3 6; do
		for o in "--children" "--no-children" "--children --sort sym" "--no-children -g caller" "--children -g callee"; do
			# shellcheck disable=SC2086
			perf report -i $f --stdio --max-stack $ms $o -g none 2> /dev/null | upto > perf.t
			# shellcheck disable=SC2086
			preport -i $f --max-stack $ms $o -g none 2> /dev/null | upto > pre.t
			[ "$(wc -l < perf.t)" -ge 3 ] || fail "$f --max-stack $ms $o: perf printed too little"
			same_rows perf.t pre.t || { diff perf.t pre.t; fail "$f --max-stack $ms $o: the table differs from perf's"; }
			n=$((n + 1))
		done
	done
done
echo "ok: $n tables as perf prints them"

# the frame-pointer recording's call graphs (caller order keeps the outermost frames)
for o in "--children -g caller" "--no-children -g caller" "--no-children -g callee"; do
	# shellcheck disable=SC2086
	perf report -i fp.data --stdio --max-stack 4 $o 2> perf.err | { grep -v -e '^#' -e '^$' || true; } > perf.g
	# shellcheck disable=SC2086
	preport -i fp.data --max-stack 4 $o 2> pre.err | { grep -v -e '^#' -e '^$' || true; } > pre.g
	# rows, not lines: how many rows get a graph is the few samples outside the hot functions
	[ "$(grep -cE '^ +[0-9]+\.[0-9]+%' perf.g)" -ge 5 ] ||
		{ head -20 perf.g perf.err; fail "--max-stack 4 $o: perf printed too little"; }
	[ -s pre.g ] || { cat pre.err; fail "--max-stack 4 $o: preport printed nothing"; }
	same_graph perf.g pre.g || { diff perf.g pre.g | head -20; fail "--max-stack 4 $o: the call graph differs from perf's"; }
done

# a deeper limit than any stack changes nothing
preport -i dw.data --max-stack 1024 -g none > a.t
preport -i dw.data -g none > b.t
cmp -s a.t b.t || fail "--max-stack 1024 differs from the default on stacks under 127 frames"
echo ok
