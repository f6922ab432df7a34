#!/bin/sh
# Runs every test: the Check unit suites (build/check_runner), then each integration test
# tests/integration/test_*.sh (exit 0 pass, 77 skip, anything else fail), each under a time
# limit. Ends with the line "N passed, N failed, N skipped" and exits non-zero on any failure.
# TESTS="name ..." runs only the named integration tests.
# PRECORD_TOP=DIR tests the programs of DIR instead of this tree's; with PRECORD_SANITIZE=1 (set
# by `make check SANITIZE=1`, DIR being build-san/top) every sanitizer report of any process of a
# test is logged to build/tests/sanitizer/ and fails that test, whatever its exit status.
cd "${PRECORD_TOP:-$(dirname "$0")/..}" || exit 2
top=$(pwd)
pass=0 fail=0 skip=0 failed=""
export PRECORD_TOP="$top" PATH="$top:$PATH"
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120}
san="$top/build/tests/sanitizer"
[ -z "${PRECORD_SANITIZE:-}" ] || mkdir -p "$san"

# sanitize NAME: point the sanitizers' reports of what runs next at $san/NAME.PID. A report stops
# the process (halt_on_error, -fno-sanitize-recover) with exit status 86. malloc returns NULL
# on a huge request, as glibc's does, instead of a report.
sanitize() {
	[ -n "${PRECORD_SANITIZE:-}" ] || return 0
	rm -f "$san/$1".*
	export ASAN_OPTIONS="log_path=$san/$1:exitcode=86:halt_on_error=1:detect_leaks=1:allocator_may_return_null=1:handle_abort=1${ASAN_EXTRA:+:$ASAN_EXTRA}"
	export UBSAN_OPTIONS="log_path=$san/$1:exitcode=86:halt_on_error=1:print_stacktrace=1"
	export LSAN_OPTIONS="exitcode=86"
}
# sanitizer_reports NAME: print the reports of NAME's processes, if any (then NAME fails).
sanitizer_reports() {
	[ -n "${PRECORD_SANITIZE:-}" ] || return 1
	ls "$san/$1".* > /dev/null 2>&1 || return 1
	for f in "$san/$1".*; do
		echo "    sanitizer report $f:"
		head -n 40 "$f" | sed 's/^/      /'
	done
}

if [ -z "${TESTS:-}" ]; then
	echo "== unit: build/check_runner"
	sanitize unit
	./build/check_runner
	rc=$?
	if [ $rc -eq 0 ] && ! sanitizer_reports unit; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); failed="$failed unit"
		sanitizer_reports unit
	fi
fi

for t in tests/integration/test_*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	if [ -n "${TESTS:-}" ]; then
		case " $TESTS " in *" $name "*|*" ${name#test_} "*) ;; *) continue ;; esac
	fi
	log="build/tests/$name.log"
	mkdir -p build/tests
	start=$(date +%s)
	sanitize "$name"
	timeout -k 10 300 sh "$t" > "$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	if sanitizer_reports "$name" > "$log.sanitizer"; then
		cat "$log.sanitizer" >> "$log"
		echo "FAIL $name: sanitizer report (${secs}s, exit $rc)"
		cat "$log.sanitizer"
		fail=$((fail + 1)); failed="$failed $name"
		continue
	fi
	case $rc in
	0) pass=$((pass + 1)); echo "PASS $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP $name: $(tail -n 1 "$log")" ;;
	*) fail=$((fail + 1)); failed="$failed $name"; echo "FAIL $name (exit $rc, ${secs}s); last lines of $log:"
	   tail -n 25 "$log" | sed 's/^/    /' ;;
	esac
done

[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
