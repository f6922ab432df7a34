#!/bin/sh
# --hierarchy as perf report's: a level per sort key (each row the sum of the rows under it,
# the largest first, indented three more a level), the self overhead and -n's and
# --show-total-period's columns, call graphs under the last level in the order children would
# give them, -t, filters (a single comm is still a level) and --percent-limit: perf 6.1's text,
# line for line, on a recording of mixed by perf and one by precord (tables), and by perf
# (call graphs).
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/mixed" ] || fail "workloads missing (make test-bins)"

MIXED_CPU=1 perf record -q -e cpu-clock --call-graph dwarf -o perf.data -- "$W/mixed" 0.5 2 \
	> /dev/null 2>&1 || fail "perf record failed"
MIXED_CPU=1 precord -q -e cpu-clock -o precord.data -- "$W/mixed" 0.5 2 > /dev/null 2>&1 ||
	fail "precord failed"

# same FILE ARGS...: perf's and preport's --hierarchy reports are the same text
same() {
	_f=$1
	shift
	perf report -i "$_f" --stdio --hierarchy "$@" 2> /dev/null | grep -vE '^$|^#$|^# (To display|\(Tip)' > perf.t
	preport -i "$_f" --hierarchy "$@" > pre.out || fail "preport --hierarchy $* exit $?"
	grep -vE '^$|^#$' pre.out > pre.t
	[ "$(grep -c '%' perf.t)" -ge 3 ] || { cat perf.t; fail "perf printed too little for --hierarchy $*"; }
	cmp -s perf.t pre.t || { diff perf.t pre.t | head -n 20 >&2; fail "$_f: --hierarchy $* differs from perf's"; }
	echo "ok: $_f: --hierarchy $*: $(wc -l < pre.t) lines as perf prints them"
}
# same_graphs FILE ARGS...: with call graphs, the same down to the first row under 1%, but for
# the order of equal branches (same_graph)
same_graphs() {
	_f=$1
	shift
	perf report -i "$_f" --stdio --hierarchy "$@" 2> /dev/null | upto1 > perf.g
	preport -i "$_f" --hierarchy "$@" | upto1 > pre.g
	[ "$(wc -l < perf.g)" -ge 10 ] || fail "perf printed too little for --hierarchy $*"
	same_graph perf.g pre.g || { diff perf.g pre.g | head -n 20 >&2; fail "$_f: --hierarchy $*: the call graphs differ from perf's"; }
	echo "ok: $_f: --hierarchy $*: $(wc -l < pre.g) lines of rows and call graphs as perf prints them"
}

for f in perf.data precord.data; do
	same $f -g none
	same $f -g none -s dso,sym -n --show-total-period
	same $f -g none -s sym,dso
	same $f -g none -s pid,dso -t ,
	same $f -g none -s comm,sym --comm mixed
	same $f -g none -s dso,sym --percent-limit 5
done
# Call graphs, on perf's recording (without inlined rows: perf's own order of equal inlined rows
# varies). On precord's, two branches of equal shares can come in the other order than perf's,
# with --hierarchy as without it.
same_graphs perf.data --no-inline
same_graphs perf.data --no-inline -g callee -s dso,sym
same_graphs perf.data --no-inline -g caller,2 -s sym --no-children
# the levels add up: a comm's row is the sum of its files', a file's of its functions'
# (with -t, a row is its level's indent, then " PCT%" and the samples between separators)
preport -i perf.data --hierarchy -g none -s comm,dso,sym -n -t '|' > h.txt
awk -F'|' '/^ +[0-9.]+%/ { match($1, /^ */); n[(RLENGTH - 1) / 3] += $2 }
     END { if (n[0] == 0 || n[0] != n[1] || n[1] != n[2]) { print "levels: " n[0] " " n[1] " " n[2]; exit 1 } }' h.txt ||
	fail "the levels' samples do not add up"
# -F makes columns, which --hierarchy does not take
preport -i perf.data --hierarchy -F overhead,sym > /dev/null 2> err.txt && fail "--hierarchy with -F was accepted"
grep -q -- '--hierarchy' err.txt || { cat err.txt; fail "--hierarchy with -F: the message does not say why"; }
echo ok
