#!/bin/sh
# -F/--fields as perf report's: the columns in the order given (overhead, overhead_children,
# overhead_sys, overhead_us, sample, period, sort keys), -s's keys appended as columns, the rows
# ordered by -s's keys and then by the fields in turn, "+list" added to the default columns; the
# text the same as perf 6.1's, row for row, with and without children, with -t, and with call
# graphs. The kernel/user split on a recording of dd, half of its time in system calls, as fields
# and as --show-cpu-utilization's columns.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
command -v dd > /dev/null 2>&1 || skip "dd is missing"
[ -x "$W/mixed" ] || fail "workloads missing (make test-bins)"

MIXED_CPU=1 perf record -q -e cpu-clock --call-graph dwarf -o g.data -- "$W/mixed" 0.5 2 \
	> /dev/null 2>&1 || fail "perf record mixed failed"
perf record -q -e cpu-clock -o k.data -- dd if=/dev/zero of=/dev/null bs=256 count=300000 \
	> /dev/null 2>&1 || fail "perf record dd failed"
precord -q -e cpu-clock -o kp.data -- dd if=/dev/zero of=/dev/null bs=256 count=300000 \
	> /dev/null 2>&1 || fail "precord dd failed"

# table FILE ARGS...: perf's and preport's tables (headers and rows) are the same text
table() { same_table -F "$@"; }

for F in overhead,sym sym,overhead overhead_children,overhead,dso \
	overhead,overhead_sys,overhead_us,sample,period,comm,sym sample,overhead,sym period,comm \
	dso,sym,overhead +period,sample +overhead_sys; do
	for ch in --children --no-children; do
		table g.data -F "$F" $ch --no-inline -g none
	done
done
# with -s: its keys first in the order, then -F's fields; its keys -F leaves out as columns
table g.data -F overhead,sym -s dso --no-inline -g none
table g.data -F sym,overhead -s dso --no-inline -g none
table g.data -F dso,sym -s sym --no-children -g none
table g.data -s sym -F +sample --no-children -g none
# a field given twice counts once; -t pads every cell but the last, as perf
table g.data -F overhead,sym,sym --no-children -g none
table g.data -F sym,overhead_children,overhead -t '|' --no-inline -g none
table g.data -F overhead,comm,sample -t , --no-children -g none
# Children without children: N/A, with -t too; a "+" list's goes with the call chains (a
# recording without them), a list of its own keeps it; names in any case
table g.data -F overhead_children,sym --no-children -t , --no-inline -g none
table g.data -F sym,overhead_children --no-children -g none
table k.data -F +overhead_children
table k.data -F overhead_children,overhead,sym
table g.data -F Overhead,SYM -s DSO --no-children -g none
# with filters (a single comm hides its column) and --percent-limit
table g.data -F overhead,pid,sym --comm mixed --no-children -g none
table g.data -F overhead,sym --percent-limit 5 --no-inline -g none

# call graphs under the rows, down to the first row under 1% (with -F, a sym first in the
# order does not hide the graph's first frame, as it does with -s sym alone)
for args in "-F overhead,sym -g caller --no-children" "-F sym,overhead -g callee --no-children" \
	"-F overhead_children,overhead,sym -g caller --no-inline" "-F overhead,sym -g caller --no-inline"; do
	# shellcheck disable=SC2086
	perf report -i g.data --stdio $args 2> /dev/null | upto1 > perf.g
	# shellcheck disable=SC2086
	preport -i g.data $args | upto1 > pre.g
	[ "$(wc -l < perf.g)" -ge 10 ] || fail "perf printed too little for $args"
	same_graph perf.g pre.g || { diff perf.g pre.g >&2; fail "$args: the call graph differs from perf's"; }
	echo "ok: $args: $(wc -l < pre.g) lines of call graph as perf prints them"
done

# The kernel/user split: dd's rows have both, and the two add up to the overhead.
for f in k.data kp.data; do
	table $f -F overhead,overhead_sys,overhead_us,comm,dso --no-children
	table $f -F overhead_sys,overhead,dso,sym --no-children
	preport -i $f -F overhead,overhead_sys,overhead_us,comm --no-children |
		awk '$4 == "dd" { o = $1 + 0; s = $2 + 0; u = $3 + 0 }
		     END { if (!(s >= 10 && u >= 10 && s + u - o < 0.02 && o - s - u < 0.02)) {
			print "dd: overhead " o "%, sys " s "%, usr " u "%"; exit 1 } }' ||
		fail "$f: overhead_sys and overhead_us do not split dd's overhead"
	# --show-cpu-utilization: sys and usr after the overhead, a "+" list's too; not in a
	# list of its own (perf)
	table $f --show-cpu-utilization -n --no-children
	table $f --show-cpu-utilization -F +period -t ,
	table $f --show-cpu-utilization --hierarchy -n -s comm,dso
	table $f --show-cpu-utilization -F overhead,dso --no-children
done
echo "ok: overhead_sys and overhead_us split the kernel's and the user's samples"

# bad lists: the field named, exit status 2
preport -i g.data -F overhead,bogus > /dev/null 2> err.txt && fail "-F overhead,bogus was accepted"
[ $? -eq 2 ] || fail "-F overhead,bogus: exit status is not 2"
grep -q "unknown field 'bogus'" err.txt || { cat err.txt; fail "-F overhead,bogus: the message does not name the field"; }
preport -i g.data -F overhead,sample > /dev/null 2> err.txt && fail "-F without a sort key was accepted"
[ $? -eq 2 ] || fail "-F without a sort key: exit status is not 2"
grep -q "no sort key" err.txt || { cat err.txt; fail "-F without a sort key: unclear message"; }
preport -i g.data -F , > /dev/null 2>&1 && fail "an empty -F list was accepted"
echo ok
