# --lossless together with the rest of the recorder: several readers or one, each affinity
# scope, compression on and off, on a small sched_yield storm with perf's settings and a high
# watermark of 2% of a 1 MiB ring (so that each run pauses a few times) and a low
# one of 1%. Each run:
# exit 0, "0 lost", perf report --stats reads it quietly and finds no LOST / LOST_SAMPLES, and
# the SWITCH records are at least twice the switches the storm counted itself; or, where the
# pause timed at start needs more room than these rings leave, a refusal before the storm ran
# (exit 2, the minimum named), and then the same run at that minimum, which must hold.
. "$(dirname "$0")/lib.sh"

threads=$((2 * $(nproc)))
run() { # NAME OPTIONS...
	name=$1
	shift
	rc=0
	# shellcheck disable=SC2086 # LOSSLESS_SMALL is a list of options
	YIELD_STORM_REPORT=1 precord $LOSSLESS_SMALL \
		"$@" -o "$name.data" -- "$W/yield_storm" 10000 "$threads" 2> "$name.err" || rc=$?
	# -m 256 and --high-watermark are given: where the pause timed at start needs more room than
	# they leave (a starved machine: 49.5 ms under a CPU hog, a second test suite and ASan),
	# precord cannot honour them and refuses before the command starts (exit 2, the minimum
	# named; precord.1, LOSSLESS MODE): the storm never ran, so it reported nothing.
	# The minimum it named must then hold: the row runs again there (beside a CPU hog 2 to 4 of
	# the 5 rows were refused, and a refusal alone tests no pause).
	if [ $rc = 2 ] && [ -z "${at_min:-}" ] && lossless_refused "$name"; then
		! grep -q "^yield_storm: " "$name.err" || fail "$name: refused, but the storm ran"
		echo "$name ($*): refused here, $(grep -o 'pausing takes up to [0-9.]* ms' "$name.err"), the minimum is -m $refused_min: again there"
		at_min=1
		run "$name-m$refused_min" "$@" -m "$refused_min"
		at_min=
		return 0
	fi
	[ $rc = 0 ] || { cat "$name.err"; fail "$name: precord exit $rc"; }
	lossless_storm_ok "$name"
	echo "$name ($*): $(grep -o 'lossless via [^;]*' "$name.err"); $sw SWITCH for $S switches"
	pauses=$(sed -n 's/.*lossless via [^:]*: \([0-9]*\) pauses,.*/\1/p' "$name.err")
	# at the minimum ring the storm may fit above the high mark without a pause
	[ -n "${at_min:-}" ] || assert_ge "${pauses:-0}" 1 "$name: pauses"
}

run one-system-z     --readers 1 --affinity system -z
run one-plain        --readers 1 --no-compress
run two-smt-plain    --readers 2 --affinity smt --no-compress
run cache-z3         --affinity cache -z3
run numa             --affinity numa
echo ok
