#!/bin/sh
# -p/--parent REGEX, -x/--exclude-other and the parent sort key as perf report's: each sample's
# parent is the first frame of its chain the regex matches, in the order the graph is shown
# (from the root in caller order, from the leaf in callee order), "[other]" without one; -p adds
# the key after the others (-s's, the default ones, or -F's), -s parent alone takes perf's
# default pattern, -x keeps the samples without a parent in the totals but in no row. On dd,
# half of its time in read and write system calls, recorded by perf with DWARF stacks: the
# tables (flat, -t, --hierarchy, -F, children) and the call graphs are perf 6.1's text. perf
# looks for the parent in recorded chains only; preport in DWARF-unwound ones too, checked
# with a user-space parent (main). A regex that does not compile is refused, exit 2.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
command -v dd > /dev/null 2>&1 || skip "dd is missing"
[ -x "$W/mixed" ] || fail "workloads missing (make test-bins)"

perf record -q -e cpu-clock --call-graph dwarf -o dd.data -- dd if=/dev/zero of=/dev/null bs=256 \
	count=300000 > /dev/null 2>&1 || fail "perf record dd failed"
precord -q -e cpu-clock -o m.data -- "$W/mixed" 0.5 2 > /dev/null 2>&1 || fail "precord failed"

SYS='^ksys_|^__x64_sys_'
same_table parent dd.data --no-children -g none -p "$SYS"
same_table parent dd.data -g none -s parent
same_table parent dd.data -g none -s comm,parent -x -p "$SYS"
same_table parent dd.data --children -g none -s parent -p '^(__x64_sys|ksys)_'
same_table parent dd.data -g none -s parent,comm -t , -p '^ksys_'
same_table parent dd.data --hierarchy -s comm,parent -p "$SYS"
same_table parent dd.data --no-children -g none -F overhead,sym -p "$SYS"
# -p's key is one -F may rely on; a parent column of -F's alone has no pattern (all [other]);
# a frame that is the parent is not one --ignore-callees matches (perf tests it for the
# parent first), so the same regex for both changes nothing
same_table parent dd.data --no-children -g none -F overhead -p '^ksys_'
same_table parent dd.data --no-children -g none -F overhead,parent
same_table parent dd.data --no-children -g none -p '^ksys_' --ignore-callees '^ksys_'
# the syscalls split dd's time: read's and write's rows hold a good part of it
preport -i dd.data --no-children -g none -s parent -p '^ksys_' > t.txt
for f in ksys_read ksys_write; do
	share=$(awk -v f=$f '$2 == f { print $1 + 0 }' t.txt)
	assert_ge "${share%.*}" 5 "$f's share of dd's samples (%)"
done
# call graphs under the parent rows (perf splits an inlined frame's branch of a callee-ordered
# graph in two where preport keeps one: callee order without inlined frames)
for args in "-g caller -s parent" "-g caller --no-children -s parent" \
	"-g callee --no-children -s parent --no-inline"; do
	# shellcheck disable=SC2086
	perf report -i dd.data --stdio $args -p "$SYS" 2> /dev/null | upto1 > perf.g
	# shellcheck disable=SC2086
	preport -i dd.data $args -p "$SYS" | upto1 > pre.g
	[ "$(wc -l < perf.g)" -ge 10 ] || fail "perf printed too little for $args"
	same_graph perf.g pre.g || { diff perf.g pre.g >&2; fail "$args -p: the call graph differs from perf's"; }
	echo "ok: dd.data: $args -p '$SYS': $(wc -l < pre.g) lines of call graph as perf prints them"
done

# a parent in the DWARF-unwound part of the chains: nearly every sample of mixed is under main
# or start_thread; -x leaves the others out of the rows, not out of the totals
preport -i m.data --no-children -g none -s parent -p '^(main|start_thread)$' > t.txt
main=$(awk '$2 == "main" { print $1 + 0 }' t.txt)
thr=$(awk '$2 == "start_thread" { print $1 + 0 }' t.txt)
[ -n "$main" ] && [ -n "$thr" ] || { cat t.txt; fail "no main or start_thread parent row"; }
awk -v a="$main" -v b="$thr" 'BEGIN { exit !(a + b >= 95) }' || { cat t.txt; fail "main and start_thread hold $main% + $thr% of mixed"; }
preport -i m.data --no-children -g none -s parent -p '^main$' -x > x.txt
grep -q '\[other\]' x.txt && { cat x.txt; fail "-x shows the samples without a parent"; }
assert_eq "$(awk '$2 == "main" { print $1 + 0 }' x.txt)" "$main" "main's share with -x (of every sample)"
echo "ok: m.data: parents in unwound chains: main $main%, start_thread $thr%; -x hides [other]"

set +e
preport -i dd.data -p '[' > /dev/null 2> err.txt
rc=$?
set -e
assert_eq "$rc" 2 "exit status of a -p regex that does not compile"
grep -q "invalid -p/--parent '\['" err.txt || { cat err.txt >&2; fail "the message does not name -p"; }
set +e
preport -i dd.data -s comm,dso,sym,pid,cpu,cgroup,unit,srcline -p x > /dev/null 2> err.txt
rc=$?
set -e
assert_eq "$rc" 2 "exit status of -p with eight other keys"
grep -q "too many sort keys with -p/--parent" err.txt || { cat err.txt >&2; fail "-p with eight other keys: unclear message"; }
echo ok
