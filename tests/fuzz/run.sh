#!/bin/sh
# Runs libFuzzer targets: FUZZ_BIN=DIR FUZZ_OUT=DIR FUZZ_TIME=SECONDS FUZZ_JOBS=N \
#     sh tests/fuzz/run.sh fuzz_NAME...
# Each target runs FUZZ_TIME seconds (default 60) over its seeds (tests/fuzz/corpus/NAME/, and
# tests/corpus/ for fuzz_reader), at most FUZZ_JOBS (default 1) at a time, under nice. What it
# learns goes to FUZZ_OUT/corpus/NAME/ (kept, so later runs start from there; the seed
# directories are never written), a crashing input to FUZZ_OUT/artifacts/, its output to
# FUZZ_OUT/NAME.log. Prints one line per target (inputs run, execs/s, corpus) and exits non-zero
# when any target found something.
cd "$(dirname "$0")/../.." || exit 2
bin=${FUZZ_BIN:-build/fuzz}
out=${FUZZ_OUT:-$bin}
time=${FUZZ_TIME:-60}
jobs=${FUZZ_JOBS:-1}
[ $# -gt 0 ] || { echo "usage: tests/fuzz/run.sh fuzz_NAME..." >&2; exit 2; }
mkdir -p "$out/artifacts"
# Leaks count as findings; a huge malloc is refused (NULL) as glibc would, rather than
# reported: the parsers must cope with NULL, and -malloc_limit_mb reports what gets through.
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:handle_abort=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

one() {
	name=$1
	seeds="tests/fuzz/corpus/$name"
	[ "$name" = fuzz_reader ] && seeds="tests/corpus"
	mkdir -p "$out/corpus/$name"
	nice -n 19 "$bin/$name" -max_total_time="$time" -timeout=20 -rss_limit_mb=2048 \
		-malloc_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/artifacts/$name-" \
		"$out/corpus/$name" "$seeds" > "$out/$name.log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$name.log")
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/$name.log")
	cov=$(grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*/[0-9]*[a-zA-Z]*' "$out/$name.log" | tail -n 1)
	if [ $rc -eq 0 ]; then
		echo "$name: ${time}s, ${execs:-?} inputs (${speed:-?}/s), $cov, no finding"
	else
		echo "$name: FINDING (exit $rc), see $out/$name.log and $out/artifacts/:"
		grep -m1 -E 'ERROR|runtime error|SUMMARY|deadly signal' "$out/$name.log" | sed 's/^/    /'
		return 1
	fi
}

status=0 running=0 pids=""
for name in "$@"; do
	[ -x "$bin/$name" ] || { echo "$name: $bin/$name not built (make fuzz-bins)"; status=1; continue; }
	one "$name" &
	pids="$pids $!"
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		for p in $pids; do wait "$p" || status=1; done
		pids="" running=0
	fi
done
for p in $pids; do wait "$p" || status=1; done
exit $status
