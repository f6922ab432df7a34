#!/bin/sh
# preport --header-only prints byte for byte what perf report --header-only prints, on files of
# perf record (plain; -z with --call-graph dwarf; -a; a group; a tracepoint with -k mono) and of
# precord, and on a pipe-mode stream (perf record -o -) given on standard input; preport --header
# prints the same header, then the report. "captured on" is the file's mtime: both read the same
# file, and a pipe-mode stream is saved to a file first so that both see one time.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/spin_threads" ] || fail "the spin_threads workload is missing (make test-bins)"

# header_same NAME FILE: --header-only identical; --header's first lines are that header, and
# a report follows.
header_same() {
	perf report --header-only -i "$2" > "$1.perf" 2> "$1.perf.err" || fail "$1: perf report --header-only exit $?"
	preport --header-only -i "$2" > "$1.pre" 2> "$1.pre.err" || { rc=$?; cat "$1.pre.err"; fail "$1: preport --header-only exit $rc"; }
	grep -q '^# event : name = ' "$1.perf" || { cat "$1.perf"; fail "$1: perf printed no event"; }
	cmp -s "$1.perf" "$1.pre" || { diff "$1.perf" "$1.pre" | head -20; fail "$1: preport --header-only differs from perf's"; }
	preport --header -i "$2" > "$1.full" 2> /dev/null || fail "$1: preport --header exit $?"
	n=$(wc -l < "$1.perf")
	head -n "$n" "$1.full" | cmp -s - "$1.perf" || { head -n "$n" "$1.full" | diff "$1.perf" - | head; fail "$1: preport --header's header differs from perf's"; }
	tail -n +"$((n + 1))" "$1.full" | grep -q '^# Samples: ' || fail "$1: no report after the header"
	echo "ok: $1: $n lines as perf's"
}

perf record -q -o plain.data -- "$W/spin_threads" 0.2 > /dev/null 2>&1 || fail "perf record failed"
header_same "perf plain" plain.data

perf record -q -z --call-graph dwarf -o z.data -- "$W/spin_threads" 0.2 > /dev/null 2>&1 || fail "perf record -z failed"
header_same "perf -z dwarf" z.data

perf record -q -a -o a.data -- "$W/spin_threads" 0.2 > /dev/null 2>&1 || fail "perf record -a failed"
header_same "perf -a" a.data

perf record -q -e '{cpu-clock,task-clock}' -o group.data -- "$W/spin_threads" 0.2 > /dev/null 2>&1 ||
	fail "perf record of a group failed"
header_same "perf group" group.data
grep -q '^# group: {cpu-clock,task-clock}$' "perf group.pre" || fail "no group line"

perf record -q -e sched:sched_switch -k mono -o tp.data -- "$W/spin_threads" 0.2 > /dev/null 2>&1 ||
	fail "perf record -e sched:sched_switch -k mono failed"
header_same "perf tracepoint -k mono" tp.data

precord -q -o precord.data -- "$W/spin_threads" 0.2 > /dev/null || fail "precord failed"
header_same "precord" precord.data

# BPF_BTF of 60,000 entries, 30,000 ids each twice in a scrambled order: each once, in order,
# as perf prints them (before, preport searched the list once per id printed: minutes for a
# hostile file of 200,000)
"$TOP/build/tools/btf_section" plain.data btf.data 60000 || fail "btf_section failed"
header_same "perf plain, 60000 BTF entries" btf.data
[ "$(grep -c '^# btf info of id ' "perf plain, 60000 BTF entries.pre")" -eq 30000 ] ||
	fail "not 30000 btf lines"

# damaged records are not the header's: printed whole, a warning, exit 0 (as perf)
doff=$(awk '/^# data offset/ { print $NF }' "perf -z dwarf.pre")
"$TOP/build/tools/mutate" apply z.data bad.data S2 $((doff + 6)) 0 || fail "mutate failed"
perf report --header-only -i bad.data > bad.perf 2> /dev/null || fail "perf report --header-only of bad.data exit $?"
preport --header-only -i bad.data > bad.pre 2> bad.err || fail "preport --header-only of bad.data exit $?"
cmp -s bad.perf bad.pre || { diff bad.perf bad.pre | head; fail "a record of size 0: the header differs from perf's"; }
grep -q 'in its records' bad.err || fail "no warning for the damaged records"
echo "ok: a record of size 0: the header as perf's, a warning, exit 0"

# "captured on" is the mtime, not the ctime
touch -m -d '2020-01-02 03:04:05' plain.data
header_same "perf plain, old mtime" plain.data

# pipe mode: the header's zeros, the closing lines, then the stream's features, no missing line
perf record -q -o - -- "$W/spin_threads" 0.2 2> /dev/null > pipe.data || fail "perf record -o - failed"
perf report --header-only -i - < pipe.data > pipe.perf 2> /dev/null || fail "perf report on the stream exit $?"
preport --header-only -i - < pipe.data > pipe.pre 2> pipe.err || { rc=$?; cat pipe.err; fail "preport on the stream exit $rc"; }
cmp -s pipe.perf pipe.pre || { diff pipe.perf pipe.pre | head -20; fail "pipe: preport --header-only differs from perf's"; }
echo "ok: pipe-mode stream: $(wc -l < pipe.perf) lines as perf's"

# the numbers other tests take from the header with awk's $NF
dsize=$(awk '/^# data size/ { print $NF }' "perf plain.pre")
doff=$(awk '/^# data offset/ { print $NF }' "perf plain.pre")
assert_ge "$dsize" 1 "data size"
assert_ge "$doff" 104 "data offset"
