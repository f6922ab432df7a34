#!/bin/sh
# preport --pprof read back by an independent reader, `go tool pprof`: every function's flat
# share agrees with preport's self table (--no-children -g none --sort sym) to 0.1 point, on a
# perf -z DWARF recording and on precord's; the labels comm/pid/tid are there, and mappings
# carry the executable's build id. Both sides by symbol: the self table names a sample by its
# symbol (as perf does), where pprof's flat share goes to the innermost function inlined at the
# address (so `go tool pprof -noinlines`). The inlined functions are checked on their own: on
# a workload whose hot code is std::sort inlined into main, pprof's flat shares go to them.
# Also: a bad output path is an error naming the path.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
command -v go > /dev/null 2>&1 || skip "go (golang-go) is not installed: go tool pprof reads the profiles"
[ -x "$W/mixed" ] || fail "the mixed workload is missing (make test-bins)"
# go tool pprof without a network or a home: caches in the test's directory
export HOME="$PWD/home" GOCACHE="$PWD/gocache" GOPROXY=off GOFLAGS=
mkdir -p "$HOME"

perf record -q -z -e cpu-clock --call-graph dwarf -o perf.data "$W/mixed" 1 > /dev/null 2>&1 ||
	fail "perf record failed"
precord -q -e cpu-clock -o precord.data -- "$W/mixed" 0.5 > /dev/null || fail "precord failed"

# "NAME PERCENT" per function, percents of rows of one name summed; preport's "NAME (inlined)"
# rows are pprof's inlined functions (extra lines of a location), named NAME. Addresses without
# a symbol are one row, "<unknown>" (pprof's own name for some), as in test_daemon_push: preport
# prints the address (0x0000000000003981, as perf does), pprof the mapping of a location without
# lines ([libgcc_s.so.1]); a run where 0.13% of the samples fell there failed on the names alone.
pre_self() {
	preport -q -i "$1" --no-children -g none --sort sym |
		awk '/^ +[0-9.]+%/ { p = $1 + 0; sub(/^ +[0-9.]+% +\[.\] /, ""); sub(/ +$/, ""); sub(/ \(inlined\)$/, "")
				     if ($0 ~ /^0x[0-9a-f]+$/) $0 = "<unknown>"; s[$0] += p }
		     END { for (n in s) printf "%s\t%.2f\n", n, s[n] }' | LC_ALL=C sort
}
# pprof_flat PROFILE [-noinlines]
pprof_flat() {
	go tool pprof -top ${2:-} -nodecount=100000 -nodefraction=0 -edgefraction=0 "$1" 2> pprof.err |
		awk 'f && NF >= 6 { p = $2 + 0; n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", n)
				     sub(/ +$/, "", n); if (n ~ /^\[.*\]$/) n = "<unknown>"; s[n] += p }
		     /flat%/ { f = 1 }
		     END { for (n in s) printf "%s\t%.2f\n", n, s[n] }' | LC_ALL=C sort
}

# agree LABEL: every row of pre.tsv or pp.tsv above 0.1% is on the other within 0.1 point;
# prints how many rows were compared.
agree() {
	join -t "$(printf '\t')" -a 1 -a 2 -e 0 -o 0,1.2,2.2 pre.tsv pp.tsv |
		awk -F '\t' -v f="$1" '
			$2 + 0 < 0.1 && $3 + 0 < 0.1 { next }
			{ n++; d = $2 - $3; if (d < 0) d = -d
			  if (d > 0.1) { printf "FAIL: %s: %s: preport %s%%, pprof %s%%\n", f, $1, $2, $3 > "/dev/stderr"; bad++ } }
			END { print n + 0; exit bad > 0 }'
}

exe_id=$(readelf -n "$W/mixed" 2> /dev/null | awk '/Build ID/ { print $3 }')
for f in perf.data precord.data; do
	rm -f prof.pb.gz
	preport -q -i "$f" --pprof prof.pb.gz > out.txt 2> err.txt ||
		{ cat err.txt >&2; fail "$f: preport --pprof exit $?"; }
	[ -s prof.pb.gz ] || fail "$f: no profile written"
	[ ! -s out.txt ] || fail "$f: --pprof also printed a report on stdout"
	gzip -t prof.pb.gz || fail "$f: the profile is not gzip'd"
	pre_self "$f" > pre.tsv
	pprof_flat prof.pb.gz -noinlines > pp.tsv
	[ -s pp.tsv ] || { cat pprof.err >&2; fail "$f: go tool pprof -top read nothing"; }
	rows=$(agree "$f") || fail "$f: pprof's flat shares disagree with preport's self table"
	assert_ge "$rows" 5 "$f: functions compared"
	# pprof's top function is preport's (or within 0.1 point of it), and one of mixed's own: their
	# order depends on the machine (mixed runs each a number of iterations; under a CPU hog
	# main_loop_work passed mix::lib_crunch, 29.99% to 27.15%)
	top=$(awk -F '\t' '{ print $2 "\t" $1 }' pp.tsv | sort -rn | head -1 | cut -f2)
	pre_top=$(sort -t "$(printf '\t')" -k2,2 -rn pre.tsv | head -1 | cut -f2)
	awk -F '\t' -v t="$top" -v m="$pre_top" '$1 == t && $2 + 0.1 >= m { ok = 1 } END { exit !ok }' pre.tsv ||
		fail "$f: pprof's top function '$top' is not preport's (whose top has $pre_top%)"
	case $top in mix::lib_crunch|main_loop_work|recurse|"poly_sum<double>"|"poly_sum<float>") ;;
	*) fail "$f: the top function '$top' is not one of mixed's" ;; esac
	# labels
	go tool pprof -tags prof.pb.gz > tags.txt 2> /dev/null || fail "$f: go tool pprof -tags failed"
	grep -q 'comm: Total' tags.txt && grep -q ': mixed$' tags.txt || fail "$f: no comm label 'mixed'"
	grep -q 'pid: Total' tags.txt && grep -q 'tid: Total' tags.txt || fail "$f: no pid/tid labels"
	# mappings with the build id of the executable
	go tool pprof -raw prof.pb.gz > raw.txt 2> /dev/null || fail "$f: go tool pprof -raw failed"
	# the kernel records the path resolved (the sanitized run reaches $W through a symlink)
	[ -z "$exe_id" ] || grep -q "$(readlink -f "$W/mixed") $exe_id" raw.txt ||
		{ sed -n '/^Mappings/,$p' raw.txt >&2; fail "$f: no mapping of mixed with build id $exe_id"; }
	echo "ok: $f: $rows functions agree with go tool pprof to 0.1 point; labels and build ids present"
done

# Function names: demangled, the file's spelling as system_name; --no-demangle names them as
# the file spells them (pprof demangles on its own unless told not to: -symbolize=none)
preport -q -i precord.data --no-demangle --pprof nd.pb.gz || fail "preport --no-demangle --pprof failed"
go tool pprof -top -symbolize=none nd.pb.gz 2> /dev/null | grep -q ' _ZN3mix10lib_crunchEl$' ||
	fail "--no-demangle: no function named _ZN3mix10lib_crunchEl"
go tool pprof -top -symbolize=none prof.pb.gz 2> /dev/null | grep -q ' mix::lib_crunch$' ||
	fail "no function named mix::lib_crunch"
go tool pprof -raw -symbolize=none prof.pb.gz 2> /dev/null | grep -q 'mix::lib_crunch.*(_ZN3mix10lib_crunchEl)' ||
	fail "mix::lib_crunch's system name is not _ZN3mix10lib_crunchEl"
echo "ok: function names demangled (system names as spelled), or as spelled with --no-demangle"

# Inlined functions as pprof models them (Lines of one Location): the inlines workload's time
# is in std::sort's partition, inlined into main; at -O2 nothing of it is a symbol.
[ -x "$W/inlines" ] || fail "the inlines workload is missing (make test-bins)"
precord -q -e cpu-clock -o inl.data -- "$W/inlines" 0.5 > /dev/null || fail "precord failed (inlines)"
preport -q -i inl.data --pprof inl.pb.gz || fail "preport --pprof failed (inlines)"
pprof_flat inl.pb.gz > inl.tsv
[ -s inl.tsv ] || { cat pprof.err >&2; fail "go tool pprof -top read nothing (inlines)"; }
awk -F '\t' '$1 ~ /\(inline\)$/ && $2 >= 1' inl.tsv > inl_rows.tsv
assert_ge "$(wc -l < inl_rows.tsv)" 3 "inlined functions with 1% or more of pprof's flat share"
grep -q '^__unguarded_partition (inline)' inl_rows.tsv ||
	{ cat inl.tsv >&2; fail "std::sort's inlined __unguarded_partition has no flat share in pprof"; }
# and by symbol, the same profile agrees with the self table
pre_self inl.data > pre.tsv
pprof_flat inl.pb.gz -noinlines > pp.tsv
rows=$(agree inl.data) || fail "inl.data: pprof's flat shares (-noinlines) disagree with preport's self table"
# --no-demangle names inlined functions by their linkage names too
preport -q -i inl.data --no-demangle --pprof nd-inl.pb.gz || fail "preport --no-demangle --pprof failed (inlines)"
go tool pprof -raw -symbolize=none nd-inl.pb.gz 2> /dev/null | grep -q ' _ZN9__gnu_cxx17__normal_iterator' ||
	fail "--no-demangle: no inlined function named by its linkage name (_ZN9__gnu_cxx17__normal_iterator...)"
echo "ok: inlines: $(wc -l < inl_rows.tsv) inlined functions with 1%+ of pprof's flat share; $rows functions agree by symbol"

set +e
preport -q -i perf.data --pprof /nonexistent/dir/p.pb.gz > /dev/null 2> err.txt
rc=$?
set -e
assert_eq "$rc" 3 "exit status writing to a missing directory"
grep -q "cannot write the pprof profile to /nonexistent/dir/p.pb.gz" err.txt ||
	{ cat err.txt >&2; fail "no error naming the path"; }
echo ok
