#!/bin/sh
# Samples whose user stack the kernel could not copy (its copy is empty: the stack pointer is in a
# page not yet touched, as in a new thread's first instructions after clone3). perf unwinds no
# user frame from them, not even the sampled ip: their Self row is the sampled function, their
# call chain empty. preport must show the same, in every call-graph view, in --folded and in an
# --unwind-to copy (CI: a single such sample in clone3 made preport's graph of clone3 differ from
# perf's). bare_stack spends half its CPU time so, under main the other half.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/bare_stack" ] || fail "the bare_stack workload is missing (make test-bins)"

perf record -q -e cpu-clock --call-graph dwarf -o perf.data -- "$W/bare_stack" 400 > /dev/null 2>&1 ||
	fail "perf record failed"
precord -q -e cpu-clock --call-graph dwarf -o pre.data -- "$W/bare_stack" 400 > /dev/null 2>&1 ||
	fail "precord failed"
preport -q -i perf.data --unwind-to copy.data 2> /dev/null || fail "preport --unwind-to failed"

for f in perf.data pre.data; do
	total=$(perf script -i "$f" -D 2> /dev/null | grep -c 'PERF_RECORD_SAMPLE' || true)
	bare=$(perf script -i "$f" -D 2> /dev/null | grep -c 'ustack: size 0,' || true)
	# the workload does what it is for: a good share of the samples without a stack
	assert_ge "$((bare * 100))" "$((total * 30))" "$f: samples without a stack copy ($bare of $total), x100"
	echo "$f: $bare of $total samples without a stack copy"
done

# Every view as perf prints it, down to the first row under 1% (upto1).
for f in perf.data pre.data; do
	for view in "--no-children -g caller" "--no-children -g callee" "--children -g caller" \
		"--children -g callee" "--children -g caller --no-inline"; do
		# shellcheck disable=SC2086
		perf report -i "$f" --stdio $view 2> /dev/null | upto1 > perf.g
		# shellcheck disable=SC2086
		preport -i "$f" $view | upto1 > pre.g
		grep -q '\] spin_on_bare_stack' perf.g || fail "$f $view: perf shows no spin_on_bare_stack row"
		same_graph perf.g pre.g || { diff perf.g pre.g | head -n 20 >&2; fail "$f $view: preport's graph differs from perf's"; }
		echo "ok: $f $view: $(wc -l < pre.g) lines as perf's"
	done
done
# No branch below spin_on_bare_stack's own row: its samples have no chain.
preport -i perf.data --no-children -g caller | grep -A2 '\] spin_on_bare_stack' > bare.g
! grep -q -e '---' -e '--[0-9.]*%--' bare.g || { cat bare.g >&2; fail "a call graph under spin_on_bare_stack"; }

# --folded: the comm alone for those samples, as perf script's chains fold.
for f in perf.data pre.data; do
	perf_folded "$f" > ref.folded
	preport -i "$f" --folded | LC_ALL=C sort > pre.folded
	n=$(awk '$1 == "bare_stack" { print $2 }' pre.folded)
	assert_eq "$n" "$(awk '$1 == "bare_stack" { print $2 }' ref.folded)" "$f: --folded samples without a chain"
	assert_ge "${n:-0}" 1 "$f: --folded samples without a chain"
	echo "ok: $f --folded: $n samples without a chain, as perf script's"
done

# The --unwind-to copy holds no frame for them either: perf reads it as the original.
perf report -i copy.data --stdio --no-children -g caller 2> /dev/null | grep -A2 '\] spin_on_bare_stack' > copy.g
grep -q '\] spin_on_bare_stack' copy.g || fail "no spin_on_bare_stack row in perf's report of the copy"
! grep -q -e '---' -e '--[0-9.]*%--' copy.g || { cat copy.g >&2; fail "the copy has a chain under spin_on_bare_stack"; }
echo ok
