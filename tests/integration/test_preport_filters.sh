#!/bin/sh
# preport's filters and sort keys against perf report on one recording of three processes (sh,
# hotlib, and mixed with two threads) on several CPUs: --pid, --tid, --comm, --cpu (perf's
# --pid, --tid, --comms, --cpu; --tid with rows per thread), --sort by each key and some pairs.
# Then the -g caller and -g callee graphs of a recording of mixed alone, text for text down to
# the first row under 1%, inlined functions included, and with --no-inline.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/mixed" ] && [ -x "$W/hotlib" ] || fail "workloads missing (make test-bins)"

# (MIXED_CPU, HOTLIB_CPU: the workloads run for their own CPU time, so the recordings hold as
# many samples however busy the machine is: the call graphs' tolerance is in points.)
MIXED_CPU=1 HOTLIB_CPU=1 perf record -q --sample-cpu -e cpu-clock --call-graph dwarf -o f.data -- \
	sh -c "'$W/mixed' 0.6 2 & '$W/hotlib' 0.6; wait" > /dev/null 2>&1 || fail "perf record failed"
perf script -i f.data -F comm,pid,tid,cpu 2> /dev/null | awk '{ print $1, $2, $3 }' |
	sort | uniq -c | sort -rn > who.txt
mixed_pid=$(awk '$2 == "mixed" { split($3, a, "/"); print a[1]; exit }' who.txt)
mixed_tids=$(awk '$2 == "mixed" { split($3, a, "/"); print a[2] }' who.txt | sort -u)
[ "$(echo "$mixed_tids" | wc -l)" -ge 2 ] || fail "expected two threads of mixed in the recording"
tid=$(echo "$mixed_tids" | tail -n 1)
cpu=$(awk '{ print $4 }' who.txt | tr -d '[]' | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 + 0 }')

# filtered WHAT "PERF ARGS" "PREPORT ARGS": both tables (--no-children, -g none) agree.
# (One row above 1% is enough: how many there are depends on how busy the machine is.)
MIN_ROWS=1
filtered() {
	# shellcheck disable=SC2086
	rows perf report -i f.data --stdio --no-children -g none $2 > "$T/perf.rows"
	# shellcheck disable=SC2086
	rows preport -i f.data --no-children -g none $3 > "$T/preport.rows"
	agree "$1" "$T/perf.rows" "$T/preport.rows" || { cat "$T/perf.rows" "$T/preport.rows" >&2; fail "$1 disagrees with perf"; }
	echo "ok: $1: $(awk '$1 + 0 > 1' "$T/perf.rows" | wc -l) rows above 1% agree"
}
filtered "--pid $mixed_pid" "--pid $mixed_pid" "--pid $mixed_pid"
# perf filters rows after merging the threads of a row (it keeps a row whose first thread
# matches, with every thread's samples); preport counts the thread's own samples. They agree
# when rows are per thread.
filtered "--tid $tid" "--tid $tid --sort pid,sym" "--tid $tid --sort pid,sym"
filtered "--comm hotlib" "--comms hotlib" "--comm hotlib"
filtered "--comm mixed,hotlib" "--comms mixed,hotlib" "--comm mixed,hotlib"
filtered "--cpu $cpu" "--cpu $cpu" "--cpu $cpu"
# a filter leaves only its rows
if preport -i f.data --no-children -g none --comm hotlib | grep -E '^ +[0-9.]+% +(mixed|sh) '; then
	fail "--comm hotlib shows other commands"
fi
n=$(preport -i f.data --no-children -g none --sort pid --tid "$tid" | grep -cE '^ +[0-9.]+% ')
assert_eq "$n" 1 "--tid $tid --sort pid rows"

for keys in comm dso sym pid cpu comm,dso dso,sym pid,sym cpu,comm; do
	# (two CPUs, and the other may be busy: --sort cpu can have one row above 1%)
	MIN_ROWS=1 VIEWS="--no-children -g none" compare_reports "sort" f.data --sort "$keys"
done
# perf has no "tid" key: its "pid" is already one row per thread, and preport's tid is that.
preport -i f.data --no-children -g none --sort tid > a.t
preport -i f.data --no-children -g none --sort pid > b.t
cmp -s a.t b.t || fail "--sort tid differs from --sort pid"
[ "$(grep -cE '^ +[0-9.]+% +[0-9]+:mixed' a.t)" -ge 2 ] || fail "--sort tid does not show both threads of mixed"

# Call graphs, text for text, down to the first row under 1%, on a recording of one process:
# when several processes share libc, perf's own DWARF unwinding sometimes stops short of _start
# and clone3 (varying from one recording to the next), where preport's goes on.
MIXED_CPU=1 perf record -q -e cpu-clock --call-graph dwarf -o g.data -- "$W/mixed" 0.5 2 > /dev/null 2>&1 ||
	fail "perf record failed"
for inl in "" --no-inline; do
	for g in caller callee caller,2 callee,5; do
		for ch in --no-children --children; do
			# With inlined rows among its Children rows, perf 6.1's hist tree holds some
			# functions twice (it compares inlined symbols by name, others by address):
			# see test_preport_inline. Children are compared with --no-inline.
			[ "$ch,$inl" = "--children," ] && continue
			perf report -i g.data --stdio $inl $ch -g "$g" --sort sym 2> /dev/null | upto1 > perf.g
			preport -i g.data $inl $ch -g "$g" --sort sym | upto1 > pre.g
			[ "$(wc -l < perf.g)" -ge 10 ] || fail "perf printed too little for -g $g $ch $inl"
			same_graph perf.g pre.g || { diff perf.g pre.g >&2; fail "-g $g $ch $inl: the call graph differs from perf's"; }
			echo "ok: -g $g $ch $inl: $(wc -l < pre.g) lines as perf prints them"
		done
	done
done
# -g none prints no graph; caller and callee print different trees.
preport -i f.data --no-children -g none --sort sym | grep -q -- '---' && fail "-g none printed a graph"
preport -i f.data --no-children -g caller --sort sym > a.g
preport -i f.data --no-children -g callee --sort sym > b.g
cmp -s a.g b.g && fail "-g caller and -g callee print the same"
echo ok
