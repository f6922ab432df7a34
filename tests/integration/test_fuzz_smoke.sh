#!/bin/sh
# A short run (FUZZ_SMOKE_TIME seconds each, default 30) of every libFuzzer target in
# build/fuzz/ (built by `make check SANITIZE=1`), from its committed seeds into a scratch
# corpus: any crash, sanitizer report, leak or timeout fails. Skipped by the plain `make check`.
. "$(dirname "$0")/lib.sh"
[ -n "${PRECORD_SANITIZE:-}" ] || skip "fuzz targets run under make check SANITIZE=1"
names=""
for f in "$TOP"/tests/fuzz/fuzz_*.c; do
	n=$(basename "$f" .c)
	[ -x "$TOP/build/fuzz/$n" ] || fail "$TOP/build/fuzz/$n is not built (make SANITIZE=1 fuzz-bins)"
	names="$names $n"
done
[ -n "$names" ] || fail "no fuzz target in $TOP/tests/fuzz"
# The fuzzers report their own findings (to their logs, printed on failure).
unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
FUZZ_BIN="$TOP/build/fuzz" FUZZ_OUT="$T/fuzz" FUZZ_TIME=${FUZZ_SMOKE_TIME:-30} FUZZ_JOBS=1 \
	sh "$TOP/tests/fuzz/run.sh" $names || {
	for l in "$T"/fuzz/fuzz_*.log; do
		grep -q -E 'ERROR|runtime error|deadly signal' "$l" || continue
		echo "== $l"; grep -v '^#[0-9]' "$l" | tail -n 60
	done
	fail "a fuzz target found something"
}
