#!/bin/sh
# Call chains deeper than the stack copy (8 KiB, perf's and precord's default): perf's unwind
# reads past the copy as 0 from the [stack] map that DWARF recordings carry (and the copy's
# last word too), so such a chain ends with a caller it shows as [unknown] 0xffffffffffffffff.
# preport's chains end as perf's: a recursion of 600-byte frames from 0 to 23 deep (graphs
# under 32 levels: perf 6.1 draws the connectors of deeper levels with a 32-bit mask), recorded
# by perf and by precord; the folded stacks are perf script's, stack for stack and count for
# count, and the call graphs (flat and folded ones without that caller, as perf's) and the
# Children table perf report's.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
command -v cc > /dev/null 2>&1 || skip "cc is missing"

cat > deep.c << 'SRC'
#include <stdlib.h>
volatile long sink;
__attribute__((noinline)) static long leaf(long n)
{
	for (long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
	return sink;
}
__attribute__((noinline)) static long down(int depth, long n)
{
	volatile char pad[600];

	pad[0] = (char)depth;
	if (depth == 0)
		return leaf(n) + pad[0];
	return down(depth - 1, n) + pad[0];
}
int main(int argc, char **argv)
{
	long rounds = atol(argv[1]);

	for (long r = 0; r < rounds; r++)
		down((int)(r % 24), 20000);
	return 0;
}
SRC
cc -O1 -fno-inline -fno-optimize-sibling-calls -g -o deep deep.c || fail "cc deep.c failed"
perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o perf.data ./deep 20000 > /dev/null 2>&1 ||
	fail "perf record failed"
precord -q -e cpu-clock -F 4000 -o pre.data -- ./deep 20000 > /dev/null || fail "precord failed"

for f in perf.data pre.data; do
	perf_folded $f > ref.folded
	preport -i $f --folded | LC_ALL=C sort > pre.folded || fail "preport --folded exit $?"
	n=$(awk '/^deep;\[unknown\];/ { n += $NF } END { print n + 0 }' ref.folded)
	assert_ge "$n" 20 "$f: perf script's chains that end past the stack copy"
	cmp -s ref.folded pre.folded || { diff ref.folded pre.folded | head -n 10 >&2; fail "$f: --folded differs from perf script's chains"; }
	echo "ok: $f --folded: $(wc -l < pre.folded) stacks as perf script's, $n samples ending past the copy"
	for view in "--no-children -g caller" "--no-children -g callee" "--children -g caller" \
		"--no-children -g flat" "--no-children -g folded"; do
		# shellcheck disable=SC2086
		perf report -i $f --stdio $view 2> /dev/null | upto1 > perf.g
		# shellcheck disable=SC2086
		preport -i $f $view | upto1 > pre.g
		# (perf's flat and folded chains leave that caller out)
		case $view in
		*flat | *folded) grep -q 0xffffffffffffffff perf.g && fail "$f $view: perf shows the caller at -1" ;;
		*) grep -q 0xffffffffffffffff perf.g || fail "$f $view: perf shows no chain ending past the copy" ;;
		esac
		same_graph perf.g pre.g || { diff perf.g pre.g | head -n 20 >&2; fail "$f $view: preport's graph differs from perf's"; }
		echo "ok: $f $view: $(wc -l < pre.g) lines as perf's"
	done
	same_table "truncated chains" $f --children -g none --sort dso,sym
done
