# Sourced by integration tests: a scratch directory removed at exit, and small assertions.
# Each test is a plain sh script: exit 0 pass, 77 skip, anything else fail.
set -eu
TOP=${PRECORD_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
W="$TOP/build/workloads"
T=$(mktemp -d /tmp/precord-test.XXXXXX)
trap 'rm -rf "$T"' EXIT INT TERM
cd "$T"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
# assert_ge ACTUAL MIN WHAT
assert_ge() { [ "$1" -ge "$2" ] || fail "$3: $1 < $2"; }
assert_le() { [ "$1" -le "$2" ] || fail "$3: $1 > $2"; }
assert_eq() { [ "$1" = "$2" ] || fail "$3: '$1' != '$2'"; }
# perf must read FILE with nothing on stderr.
perf_clean() {
	perf report -i "$1" --stdio > "$T/perf-report.out" 2> "$T/perf-report.err" || fail "perf report exit $? on $1"
	[ ! -s "$T/perf-report.err" ] || { cat "$T/perf-report.err" >&2; fail "perf report wrote to stderr on $1"; }
}

# Self percentage (integer part and two decimals as printed) of symbol SYM in FILE per perf
# report; 0 when absent. Usage: sym_pct FILE SYM [extra perf report args]
sym_pct() {
	f=$1 s=$2; shift 2
	perf report -i "$f" --stdio --no-children --sort sym -g none -q "$@" 2>/dev/null |
		awk -v s="$s" '$NF == s { gsub("%", "", $1); print $1; found=1; exit } END { if (!found) print 0 }'
}
# |a - b| <= tol for decimal numbers
close_to() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
# Count of records of TYPE (e.g. SAMPLE, LOST, SWITCH_CPU_WIDE) in perf report --stats.
stat_count() {
	perf report -i "$1" --stats 2>/dev/null | awk -v t="$2" '$1 == t && $2 == "events:" { print $3; f=1; exit } END { if (!f) print 0 }'
}
