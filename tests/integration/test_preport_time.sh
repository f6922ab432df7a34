#!/bin/sh
# --time and --percent-limit against perf report on the same files: the samples counted (and
# the "(time slices: ...)" note) for absolute ranges, several ranges and perf's percentages;
# the rows left by --percent-limit, call graphs included. Bad values are refused with exit 2.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/mixed" ] || fail "the mixed workload is missing (make test-bins)"

MIXED_CPU=1 perf record -q -z -e cpu-clock --call-graph dwarf -o perf.data "$W/mixed" 1 > /dev/null 2>&1 ||
	fail "perf record failed"
# precord writes SAMPLE_TIME, which percentages need
precord -q -e cpu-clock -o precord.data -- "$W/mixed" 1 > /dev/null || fail "precord failed"

samples_line() { grep '^# Samples' | head -1; }
# times TS: the sample times perf script prints, one per line, in seconds
perf script -i perf.data -F time 2> /dev/null | tr -d ' :' > times.txt
n=$(wc -l < times.txt)
assert_ge "$n" 100 "samples in perf.data"
t1=$(sed -n "$((n / 4))p" times.txt) t2=$(sed -n "$((n / 2))p" times.txt) t3=$(sed -n "$((n * 3 / 4))p" times.txt)

check() { # FILE TIME
	a=$(perf report -i "$1" --stdio --time "$2" 2> /dev/null | samples_line)
	b=$(preport -q -i "$1" --time "$2" | samples_line)
	[ -n "$a" ] || fail "$1: perf report printed no Samples line for --time '$2'"
	assert_eq "$b" "$a" "$1 --time '$2'"
	echo "ok: $1 --time '$2': $b"
}
check perf.data "$t1,$t2"
check perf.data ",$t1"
check perf.data "$t3,"
check perf.data "$t1,$t2 $t3,"
for t in 10%/2 10%/10 0%-10%,30%-40% 50%-100%; do
	check precord.data "$t"
done
VIEWS="--no-children -g none --sort sym|--children -g none --sort sym" compare_reports "--time" perf.data --time "$t1,$t3"

# --percent-limit: the same rows and graphs as perf (inlined rows aside, as in the other tests)
for f in perf.data precord.data; do
	perf report -i "$f" --stdio --percent-limit 10 2> /dev/null | grep -E '^ +[0-9]+\.[0-9]+%' |
		grep -v '(inlined)' | awk '{ print $1, $2 }' > perf.rows
	preport -q -i "$f" --percent-limit 10 | grep -E '^ +[0-9]+\.[0-9]+%' | awk '{ print $1, $2 }' > pre.rows
	assert_ge "$(wc -l < perf.rows)" 2 "$f: perf rows above 10%"
	awk '$1 + 0 < 10' pre.rows | grep -q . && fail "$f: preport printed a row under --percent-limit 10"
	# every row percentage perf prints is there (within 0.05 points: perf's own DWARF unwinding
	# now and then stops one sample short of _start, see test_preport_filters), and the graph
	# lines under 10% are gone
	cut -d' ' -f1 perf.rows | sort -u > a.txt
	cut -d' ' -f1 pre.rows | sort -u > b.txt
	awk 'FNR == NR { p[++n] = $1 + 0; next }
	     { v = $1 + 0; for (i = 1; i <= n; i++) if (v - p[i] <= 0.0501 && p[i] - v <= 0.0501) next; bad = 1 }
	     END { exit bad }' b.txt a.txt || { diff a.txt b.txt >&2; fail "$f: --percent-limit rows differ"; }
	preport -q -i "$f" --percent-limit 10 | grep -E -- '--[0-9.]+%--' | sed 's/.*--\([0-9.]*\)%--.*/\1/' |
		awk '$1 + 0 < 10 { bad = 1 } END { exit bad }' || fail "$f: call-graph branch under 10% printed"
	echo "ok: $f: --percent-limit 10 keeps perf's rows"
done

bad() { # ARGS... : exit 2 and a message
	set +e
	preport -q "$@" > /dev/null 2> err.txt
	rc=$?
	set -e
	assert_eq "$rc" 2 "exit status of preport $*"
	grep -q "preport: " err.txt || fail "no message for preport $*"
}
bad -i perf.data --time 5,4
bad -i perf.data --time abc
bad -i perf.data --time ,
bad -i perf.data --time 10%/20
bad -i perf.data --percent-limit 101
bad -i perf.data --percent-limit x
# percentages need SAMPLE_TIME, which perf 6.1 does not write by default
if ! perf report -i perf.data --header-only 2> /dev/null | grep -q 'sample duration'; then
	bad -i perf.data --time 10%/2
	grep -q SAMPLE_TIME err.txt || fail "the percentage error does not name SAMPLE_TIME"
fi
echo ok
