#!/bin/sh
# preport's inlined frames against perf report's, text for text: a C++ -O2 workload (std::sort
# with a lambda, a lambda called directly, a shared library with an inlined helper, PLT calls)
# recorded by perf with --call-graph dwarf. The call graphs of -g caller and callee, sorted by
# sym and by perf's default keys, must print the same lines as perf 6.1's (inlined frames
# "NAME (inlined)" included) with percentages within 0.05 points, without children (with them,
# perf's rows are not comparable: see below) and with --no-inline both ways; the tables agree;
# --folded has as many distinct stacks as perf script's chains folded; and the frames perf shows
# (cos@plt, "scaled" without its clone suffix, libc's __libc_start_main_impl) are there. A
# frame-pointer recording gets no inlined frames, as in perf 6.1. perf's flat, folded and
# fractal call graphs print the same lines. --no-demangle's graphs (mangled symbols and linkage
# names) are perf's too.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/inlines" ] || fail "the inlines workload is missing (make test-bins)"

INLINES_CPU=1 perf record -q -e cpu-clock -F 2000 --call-graph dwarf -o i.data -- "$W/inlines" 1 > /dev/null 2>&1 ||
	fail "perf record failed"

# keep: the recording, for a look at a failure, in build/tests/.
keep() { cp i.data "$TOP/build/tests/test_preport_inline.data" 2> /dev/null || true; }

for inl in "" --no-inline; do
	for sort in "--sort sym" ""; do
		for g in caller callee; do
			for ch in --no-children --children; do
				# perf 6.1 compares an inlined row's symbol by name and any other
				# by address: with inlined rows among the Children rows its hist
				# tree then holds some functions twice (main and _start as 59% and
				# 40% rows of one 99% function). preport keeps one row per function.
				[ "$ch,$inl" = "--children," ] && continue
				# With inlined frames the branches of 1% and more: once in about 20
				# recordings perf's tree of std::sort's inlined frames had a branch
				# of 0.5-0.7% (operator() (inlined), or one more level under
				# operator-- (inlined)) that preport's groups with its sibling.
				t=$g
				[ -n "$inl" ] || t=$g,1
				# shellcheck disable=SC2086
				perf report -i i.data --stdio $inl $ch -g "$t" $sort 2> /dev/null | upto1 > perf.g
				# shellcheck disable=SC2086
				preport -i i.data $inl $ch -g "$t" $sort | upto1 > pre.g
				[ "$(wc -l < perf.g)" -ge 10 ] || fail "perf printed too little for -g $g $ch $sort $inl"
				same_graph perf.g pre.g || { diff perf.g pre.g >&2; keep; fail "-g $g $ch $sort $inl: the call graph differs from perf's"; }
				echo "ok: -g $g $ch $sort $inl: $(wc -l < pre.g) lines as perf prints them"
			done
		done
	done
done
# --no-demangle: symbols and inlined functions named as the files spell them, and perf's
# test of what is inlined made on those names (a static function's DW_AT_name differs from its
# mangled symbol); the symbol filter matches the spelled name
for g in caller callee; do
	perf report -i i.data --stdio --no-demangle --no-children -g "$g,1" 2> /dev/null | upto1 > perf.g
	preport -i i.data --no-demangle --no-children -g "$g,1" | upto1 > pre.g
	grep -q '_ZSt16__introsort_loop' pre.g || fail "--no-demangle -g $g: no mangled std::sort frame"
	same_graph perf.g pre.g || { diff perf.g pre.g >&2; keep; fail "--no-demangle -g $g: the call graph differs from perf's"; }
	echo "ok: --no-demangle -g $g: $(wc -l < pre.g) lines as perf prints them"
done
sym=$(preport -i i.data --no-demangle --no-children -g none --sort sym | awk '$NF ~ /^_Z/ { print $NF; exit }')
[ -n "$sym" ] || fail "--no-demangle: no mangled symbol in the table"
# (the rows' shares summed: perf 6.1 now and then splits a function in two rows, see agree)
share() { awk '/^ +[0-9.]+%/ { s += $1 } END { printf "%.2f\n", s }'; }
s_perf=$(perf report -i i.data --stdio --no-demangle --no-children -g none --sort sym --symbols "$sym" 2> /dev/null | share)
s_pre=$(preport -i i.data --no-demangle --no-children -g none --sort sym --symbols "$sym" | share)
awk -v a="$s_pre" 'BEGIN { exit !(a > 0) }' && close_to "$s_pre" "$s_perf" 0.05 ||
	fail "--no-demangle --symbols $sym: $s_pre%, perf $s_perf%"
echo "ok: --no-demangle --symbols $sym: $s_pre%, as perf"
# perf's flat, folded and fractal call graphs (-G: perf's alias of -g caller, which wins over
# a -g callee before or after it)
# (perf 6.1's "[...]" line of -g fractal reads a symbol it never initialised: it may say
# "[...] (inlined)". fractal shows the deep branches that graph's 0.5% of all samples hides;
# there perf's tree of inlined frames differs as described above: --no-inline.)
# (perf's print_limit, the number after the threshold: at most that many branches a level)
for g in "-g flat,caller" "-g folded" "-G -g folded,callee" "-g flat,0.1,callee --sort sym" \
	"-g fractal --no-inline" "-g fractal,2,caller --sort sym --no-inline" "-g graph,0.5,2,callee" \
	"-g caller,0.5,1" "-g fractal,0.5,2,callee --no-inline"; do
	# shellcheck disable=SC2086
	perf report -i i.data --stdio --no-children $g 2> /dev/null | upto1 |
		sed 's/\[\.\.\.\] (inlined)$/[...]/' > perf.g
	# shellcheck disable=SC2086
	preport -i i.data --no-children $g | upto1 > pre.g
	[ "$(wc -l < perf.g)" -ge 10 ] || fail "perf printed too little for $g"
	same_graph perf.g pre.g || { diff perf.g pre.g >&2; keep; fail "$g: the call graph differs from perf's"; }
	echo "ok: $g: $(wc -l < pre.g) lines as perf prints them"
done
preport -i i.data --no-children -g folded | grep -qE '^[0-9.]+% [^ ].*;.* \(inlined\)' ||
	fail "-g folded printed no chain with an inlined frame"
if [ -z "$(grep -F ' (inlined)' pre.g)" ]; then
	preport -i i.data --children -g caller --sort sym | grep -qF 'sort<' ||
		fail "no inlined std::sort frame in the call graph"
fi
preport -i i.data --children -g caller --sort sym > all.g
grep -qF '(inlined)' all.g || fail "no inlined frame at all"
grep -qF '[.] scaled' all.g || fail "no row for scaled (without its clone suffix)"
grep -qF -- '__libc_start_main_impl (inlined)' all.g || fail "libc's frame is not __libc_start_main_impl (inlined)"
# the tables agree (Children with --no-inline: see above)
VIEWS="--no-children -g none --sort sym|--no-children -g none" compare_reports "inlines" i.data
VIEWS="--children -g none --sort sym" compare_reports "inlines" i.data --no-inline
# Children of an inlined function: what perf would show without its duplicate rows
row=$(preport -i i.data --children -g none --sort sym | grep -F '__libc_start_main_impl (inlined)' | awk '{ print $1 + 0 }')
close_to "${row:-0}" 99 2 || fail "__libc_start_main_impl (inlined) has ${row:-no}% children, expected nearly all samples"
# --sort srcline: perf's file:line rows (the Self view; perf's Children srclines of
# --no-inline chains are not file:line)
VIEWS="--no-children -g none" compare_reports "srcline" i.data --sort srcline
VIEWS="--no-children -g none" compare_reports "srcline" i.data --sort srcline --no-inline
preport -i i.data --no-children -g none --sort srcline | grep -qE '^ +[0-9.]+% +inlines\.cc:[0-9]+' ||
	fail "--sort srcline shows no inlines.cc line"
# --full-source-path: the paths addr2line gives (a relative file under its compilation's
# directory: this tree's, and libc's ./math/../sysdeps)
VIEWS="--no-children -g none" compare_reports "srcline" i.data --sort srcline --full-source-path
preport -i i.data --no-children -g none --sort srcline --full-source-path |
	grep -qE '^ +[0-9.]+% +/.*/tests/workloads/inlines\.cc:[0-9]+' ||
	fail "--full-source-path shows no /.../tests/workloads/inlines.cc line"
# --sort srcfile: the rows' source files (the innermost inlined function's: stl_algo.h), base
# names or with --full-source-path the paths; the call graphs under them are perf's
VIEWS="--no-children -g none" compare_reports "srcfile" i.data --sort srcfile
VIEWS="--no-children -g none" compare_reports "srcfile" i.data --sort srcfile,sym --full-source-path
preport -i i.data --no-children -g none --sort srcfile | grep -qE '^ +[0-9.]+% +stl_algo\.h' ||
	fail "--sort srcfile shows no stl_algo.h row"
perf report -i i.data --stdio --no-children -g caller --sort srcfile 2> /dev/null | upto1 > perf.g
preport -i i.data --no-children -g caller --sort srcfile | upto1 > pre.g
same_graph perf.g pre.g || { diff perf.g pre.g >&2; keep; fail "--sort srcfile -g caller: the call graph differs from perf's"; }
echo "ok: --sort srcfile -g caller: $(wc -l < pre.g) lines as perf prints them"
# ... with call graphs: a caller is one node whatever the line it calls from (perf's chains
# match by function), not one per call site
for g in caller callee; do
	perf report -i i.data --stdio --no-children -g $g --sort srcline,sym 2> /dev/null | upto1 > perf.g
	preport -i i.data --no-children -g $g --sort srcline,sym | upto1 > pre.g
	[ "$(wc -l < perf.g)" -ge 10 ] || fail "perf printed too little for --sort srcline,sym -g $g"
	same_graph perf.g pre.g || { diff perf.g pre.g >&2; keep; fail "--sort srcline,sym -g $g: the call graph differs from perf's"; }
	echo "ok: --sort srcline,sym -g $g: $(wc -l < pre.g) lines as perf prints them"
done
# PLT entries are named NAME@plt, as perf names them, when a sample falls in one
if perf report -i i.data --stdio --no-children --sort sym -g none 2> /dev/null | grep -qF 'cos@plt'; then
	preport -i i.data --no-children --sort sym -g none | grep -qF 'cos@plt' || fail "no cos@plt row"
fi

# --folded: as many distinct stacks as perf script's chains folded (perf_folded, lib.sh).
for inl in "" --no-inline; do
	perf_folded i.data $inl > ref.folded
	# shellcheck disable=SC2086
	preport -i i.data --folded $inl > pre.folded || fail "preport --folded exit $?"
	nr=$(wc -l < ref.folded)
	np=$(wc -l < pre.folded)
	# (perf's own unwinding of ld.so's first frames may differ by a stack or two)
	[ $((np * 100)) -ge $((nr * 97)) ] && [ $((np * 100)) -le $((nr * 103)) ] ||
		fail "--folded $inl: $np distinct stacks, perf script's chains fold into $nr"
	same=$(LC_ALL=C comm -12 ref.folded pre.folded | awk '{ n += $NF } END { print n + 0 }')
	tot=$(awk '{ n += $NF } END { print n + 0 }' ref.folded)
	[ $((same * 100)) -ge $((tot * 97)) ] || fail "--folded $inl: only $same of $tot samples in identical stacks"
	echo "ok: --folded $inl: $np distinct stacks (perf script: $nr), $same of $tot samples in identical lines"
done
[ "$(wc -l < pre.folded)" -lt "$(preport -i i.data --folded | wc -l)" ] ||
	fail "inlined frames give no more distinct stacks than --no-inline"

# A frame-pointer recording: perf 6.1 shows the functions inlined at a frame only in the stacks
# it unwinds itself, not in recorded call chains nor at their leaf; preport the same, so that
# its table, with children, is perf's line for line (down to 1%). Except the mode of a row
# outside any map: libc's frames without frame pointers leave garbage return addresses
# (0x208d1, 0xfad43678fac3586a), which perf's hist tree compares as (int64_t)(b - a); the
# overflow makes that order cyclic, a lookup can miss the row it made, and the "[k]"/"[.]" of the
# row perf prints is whichever copy its tree keeps (with --sort sym it prints both). preport's
# is the first sample's, as perf's would be with an ordered tree.
INLINES_CPU=1 perf record -q -e cpu-clock -F 2000 -g -o fp.data -- "$W/inlines" 1 > /dev/null 2>&1 ||
	fail "perf record -g failed"
unmapped_mode() { sed -E 's/(\[unknown\] +)\[[k.]\]/\1[?]/'; }
perf report -i fp.data --stdio --children -g none 2> /dev/null | upto1 | unmapped_mode > perf.fp
preport -i fp.data --children -g none | upto1 | unmapped_mode > pre.fp
[ "$(wc -l < perf.fp)" -ge 5 ] || fail "perf printed too little for the frame-pointer recording"
! grep -q "(inlined)" perf.fp || fail "perf 6.1 shows inlined functions in a frame-pointer recording"
diff perf.fp pre.fp || fail "the frame-pointer recording's table differs from perf's"
echo "ok: frame pointers: $(wc -l < pre.fp) rows as perf prints them, no inlined functions"
# ... but their source lines, as addr2line gives them (they were ??:0)
VIEWS="--no-children -g none" compare_reports "srcline (frame pointers)" fp.data --sort dso,srcline
VIEWS="--no-children -g none" compare_reports "srcfile (frame pointers)" fp.data --sort srcfile
preport -i fp.data --no-children -g none --sort srcline | grep -qE '^ +[0-9.]+% +inlines\.cc:[0-9]+' ||
	fail "frame pointers: --sort srcline shows no inlines.cc line"
echo ok
