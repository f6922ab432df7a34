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
