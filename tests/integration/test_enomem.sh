#!/bin/sh
# Every allocation failure ends in a reason: precord, preport, precord ctl and precordd --check
# (a good configuration and a bad one) run with the Nth
# malloc/calloc/realloc failing (build/preload/failmalloc.so), for N over the allocations a run
# makes. A run may succeed (an allocation that is only an optimisation, like stdio's buffer),
# but it must never crash, hang or exit non-zero without saying why: no empty "precord: ", no
# message ending in ": " (README, "Errors").
. "$(dirname "$0")/lib.sh"
SHIM="$TOP/build/preload/failmalloc.so"
# ASan's malloc is linked into the sanitized programs, ahead of any LD_PRELOAD shim.
[ -z "${PRECORD_SANITIZE:-}" ] || skip "failmalloc.so cannot replace ASan's malloc (the plain make check runs this)"
[ -f "$SHIM" ] || skip "build/preload/failmalloc.so is not built (make test-bins)"
perf_ok() { "$TOP/precord" -q -e cpu-clock -o probe.data -- true > /dev/null 2>&1; }
perf_ok || skip "cannot record here (perf_event_open refused)"

"$TOP/precord" -q -e cpu-clock -o in.data -- "$W/spin_threads" 2 0.3 > /dev/null 2>&1 ||
	fail "recording the input failed"

runs=0 failed=0
# check PROG N ARGS...: run ARGS with the Nth allocation of PROG failing
check() {
	prog=$1 n=$2; shift 2
	rc=0
	FAILMALLOC_PROG=$prog FAILMALLOC_NTH=$n LD_PRELOAD="$SHIM" timeout 120 "$@" > out 2> err || rc=$?
	runs=$((runs + 1))
	why=""
	if [ "$rc" -eq 124 ]; then
		why="hung"
	elif [ "$rc" -gt 128 ]; then
		why="killed by signal $((rc - 128))"
	elif [ "$rc" -ne 0 ] && [ ! -s err ]; then
		why="exit $rc with nothing on stderr"
	elif grep -q ': *$' err; then
		why="an empty reason"
	fi
	if [ -n "$why" ]; then
		echo "$prog, allocation $n failing: $why: $*"; sed 's/^/    /' err
		failed=$((failed + 1))
	fi
}

# count PROG ARGS...: how many allocations PROG makes in a run that fails none
count() {
	prog=$1; shift
	FAILMALLOC_PROG=$prog FAILMALLOC_COUNT="$T/count" LD_PRELOAD="$SHIM" "$@" > /dev/null 2>&1 || true
	c=$(cat "$T/count" 2>/dev/null || echo 0)
	assert_ge "$c" 1 "allocations counted in $prog (is the shim loaded?)"
	echo "$c"
}

# the first 20 allocations one by one, then about 25 more spread over the rest
ns() {
	c=$1
	step=$(( c / 25 )); [ "$step" -ge 1 ] || step=1
	seq 1 $(( c < 20 ? c : 20 ))
	[ "$c" -gt 20 ] && seq 21 "$step" "$c"
	true
}

c=$(count precord "$TOP/precord" -q -e cpu-clock -o rec.data -- true)
for n in $(ns "$c"); do check precord "$n" "$TOP/precord" -q -e cpu-clock -o rec.data -- true; done
c=$(count precord "$TOP/precord" -e no-such-event -- true)
for n in $(ns "$c"); do check precord "$n" "$TOP/precord" -e no-such-event -- true; done

c=$(count preport "$TOP/preport" -i in.data --stdio)
for n in $(ns "$c"); do check preport "$n" "$TOP/preport" -i in.data --stdio; done

c=$(count precord "$TOP/precord" ctl -s "$T/no-daemon" record -p $$ -d 1)
for n in $(ns "$c"); do check precord "$n" "$TOP/precord" ctl -s "$T/no-daemon" record -p $$ -d 1; done

printf 'socket = none\noutput_dir = %s/out\ncall_graph = fp\n' "$T" > good.conf
printf 'socket = none\nfrequency = 49\nfrequency = 50\n' > bad.conf
for conf in good.conf bad.conf; do
	c=$(count precordd "$TOP/precordd" --check --config $conf)
	for n in $(ns "$c"); do check precordd "$n" "$TOP/precordd" --check --config $conf; done
done

assert_ge "$runs" 40 "runs"
[ "$failed" -eq 0 ] || fail "$failed of $runs runs with a failing allocation did not say why"
echo "ok: $runs runs with one failing allocation, each one exited with a reason or succeeded"
