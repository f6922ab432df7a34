#!/bin/sh
# Runs every test: the Check unit suites (build/check_runner), then each integration test
# tests/integration/test_*.sh (exit 0 pass, 77 skip, anything else fail), each under a time
# limit. Ends with the line "N passed, N failed, N skipped" and exits non-zero on any failure.
# TESTS="name ..." runs only the named integration tests.
cd "$(dirname "$0")/.." || exit 2
top=$(pwd)
pass=0 fail=0 skip=0 failed=""
export PRECORD_TOP="$top" PATH="$top:$PATH"
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120}

if [ -z "${TESTS:-}" ]; then
	echo "== unit: build/check_runner"
	if ./build/check_runner; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed unit"; fi
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
	timeout -k 10 300 sh "$t" > "$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
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
