#!/bin/sh
# -d/--dsos and -S/--symbols select the rows perf report 6.1 selects, on a perf -z recording and
# a precord one: the samples whose own ip is in those files (by short name or path) or
# functions; the others still count in the percentages, and in the order of tied rows; a single
# value hides its column, names it in the preamble ("# dso: ...") and leaves the rows' order,
# except when every column would go. --percentage relative makes the shares, the sample count
# and the event count those of the rows shown; --show-total-period adds a Period column;
# --symbol-filter hides the rows whose own symbol's name does not hold the text; -t separates
# the cells as perf does (a row cut where perf's line buffer ends, the separator's character in
# a cell turned into '.').
# Compared text for text: the preamble, the column headers and every row, with and without
# children; rows only with call graphs.
# With children, perf 6.1 sometimes shows the row of a function inlined on the way to a sample
# its filter hides (_dl_start_final (inlined) under -d [kernel.kallsyms], its first samples
# outside the kernel), which preport does not; and perf names a rare garbage frame by a data
# symbol ("__quick_exit_funcs+0x7") that preport leaves unresolved. The children views are
# therefore compared --no-inline and down to 0.05%.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/mixed" ] || fail "the mixed workload is missing (make test-bins)"

MIXED_CPU=1 perf record -q -z -e cpu-clock -F 4000 --call-graph dwarf -o perf.data -- "$W/mixed" 0.5 2 \
	> /dev/null 2>&1 || fail "perf record -z failed"
MIXED_CPU=1 precord -q -e cpu-clock -F 4000 -o precord.data -- "$W/mixed" 0.5 2 > /dev/null ||
	fail "precord failed"

# text MODE FILE ARGS...: perf's and preport's text into perf.out and preport.out: "head", the
# lines before the first row (perf's first two, which preport does not print, left out), or
# "rows", the rows alone.
text() {
	_m=$1 _f=$2
	shift 2
	# (perf's closing tip, "#", "# (Tip: ...)", "#", left out)
	perf report -i "$_f" --stdio "$@" 2> /dev/null | sed '1,2d' |
		awk '{ l[NR] = $0 } END { n = NR; if (l[n - 1] ~ /^# \(Tip/) n -= 3; for (i = 1; i <= n; i++) print l[i] }' > perf.all
	preport -i "$_f" "$@" > preport.all 2> preport.err || fail "preport $* exit $?: $(cat preport.err)"
	for _w in perf preport; do
		if [ "$_m" = rows ]; then
			grep -E '^ +[0-9]+\.[0-9]+%' $_w.all > $_w.out || true
		else
			awk '/^ +[0-9]+\.[0-9]+%/ { exit } { print } ' $_w.all > $_w.head
			grep -E '^ +[0-9]+\.[0-9]+%' $_w.all | cat $_w.head - > $_w.out
		fi
	done
}
same() { # MODE FILE ARGS...
	text "$@"
	_n=$(grep -cE '^ +[0-9]+\.[0-9]+%' perf.out || true)
	[ "$_n" -ge "$MIN_ROWS" ] || { cat perf.all >&2; fail "perf report $* printed no rows"; }
	cmp -s perf.out preport.out || { diff perf.out preport.out | head -30 >&2; fail "preport $* differs from perf report"; }
	echo "ok: $*: $_n rows as perf's"
}

mixed_path=$(readlink -f "$W/mixed")
# With children a row is hidden when the first sample that reached it was (a caller reached
# first by a sample elsewhere): a children view may rightly show no row at all.
MIN_ROWS=1
for f in perf.data precord.data; do
	for v in "--no-children -g none" "-g none --no-inline --percent-limit 0.05"; do
		case $v in --no-children*) MIN_ROWS=1 ;; *) MIN_ROWS=0 ;; esac
		# shellcheck disable=SC2086
		{
		same head $f $v -d mixed
		same head $f $v -d libmixed.so,libc.so.6
		same head $f $v --dsos "$mixed_path"
		same head $f $v -d '[kernel.kallsyms]'
		same head $f $v -S main_loop_work
		same head $f $v --symbols recurse,mix::lib_crunch
		same head $f $v --comms mixed -d mixed -S recurse
		same head $f $v -d mixed --sort sym,comm
		same head $f $v -S recurse --comms mixed --sort sym,comm
		same head $f $v --percentage relative -d libmixed.so,libc.so.6
		same head $f $v --percentage relative --comms mixed -S main_loop_work,recurse
		same head $f $v --show-total-period -n -d mixed
		same head $f $v --symbol-filter poly_sum
		same head $f $v -t , -n --show-total-period
		same head $f $v -t : --sort sym,dso -d mixed,libmixed.so
		same head $f $v -t ab --comms mixed -d mixed
		# perf's lists: an empty last name left out, a repeated option replacing the list
		same head $f $v -d mixed,
		same head $f $v -d libc.so.6 -d mixed
		same head $f $v --symbol-filter crunch --percentage relative
		# (the comm's row is hidden when its first sample was outside libmixed.so: rows or not)
		_min=$MIN_ROWS
		MIN_ROWS=0
		same head $f $v --percentage relative -d libmixed.so --sort comm
		MIN_ROWS=$_min
		}
	done
	same rows $f -d libmixed.so --no-inline --percent-limit 0.05
	same rows $f -S recurse -g caller --no-inline --percent-limit 0.05
	same rows $f --percentage relative -d mixed --no-inline --percent-limit 0.05
	# an empty list lets nothing through, and names no column
	MIN_ROWS=0
	same head $f --no-children -g none -d ''
	[ "$(grep -c '%' preport.out)" -eq 0 ] || fail "-d '' printed rows"
	# a name given twice is refused, as perf refuses it ("problems parsing dso list")
	st=0
	preport -i $f -d mixed,mixed > /dev/null 2> twice.err || st=$?
	assert_eq "$st" 2 "exit status of -d mixed,mixed"
	grep -q "'mixed' is named twice" twice.err || fail "no message for -d mixed,mixed: $(cat twice.err)"
	# nothing selected: the table's frame, no rows
	preport -i $f --no-children -g none -d no-such.so > none.out || fail "preport -d no-such.so failed"
	grep -q '^# dso: no-such.so$' none.out || fail "no '# dso:' line for -d no-such.so"
	! grep -qE '^ +[0-9]+\.[0-9]+%' none.out || fail "-d no-such.so printed rows"
done
echo ok
