# --lossless together with the rest of the recorder: several readers or one, each affinity
# scope, compression on and off, on a small sched_yield storm with perf's settings and a high
# watermark of 2% of a 1 MiB ring (so that each run pauses a few times) and a low
# one of 1%. Each run:
# exit 0, "0 lost", perf report --stats reads it quietly and finds no LOST / LOST_SAMPLES, and
# the SWITCH records are at least twice the switches the storm counted itself.
. "$(dirname "$0")/lib.sh"

threads=$((2 * $(nproc)))
run() { # NAME OPTIONS...
	name=$1
	shift
	YIELD_STORM_REPORT=1 precord -e cpu-clock -F 20000 --switch-events --call-graph dwarf -m 256 --lossless \
		--high-watermark 2 --low-watermark 1 \
		"$@" -o "$name.data" -- "$W/yield_storm" 10000 "$threads" 2> "$name.err" ||
		{ rc=$?; cat "$name.err"; fail "$name: precord exit $rc"; }
	grep -q "^\[ precord: 0 lost \]" "$name.err" || { cat "$name.err"; fail "$name: summary does not say 0 lost"; }
	perf report -i "$name.data" --stats > "$name.stats" 2> "$name.perr" || fail "$name: perf report --stats exit $?"
	[ ! -s "$name.perr" ] || { cat "$name.perr"; fail "$name: perf report wrote to stderr"; }
	! grep -qE "^ *LOST(_SAMPLES)? events" "$name.stats" || fail "$name: perf report --stats shows losses"
	S=$(sed -n 's/^yield_storm: threads [0-9]* switches \([0-9]*\) .*/\1/p' "$name.err")
	sw=$(awk '$1 == "SWITCH" && $2 == "events:" { print $3; exit }' "$name.stats")
	echo "$name ($*): $(grep -o 'lossless via [^;]*' "$name.err"); $sw SWITCH for $S switches"
	assert_ge "${sw:-0}" $((2 * S)) "$name: SWITCH records"
	pauses=$(sed -n 's/.*lossless via [^:]*: \([0-9]*\) pauses,.*/\1/p' "$name.err")
	assert_ge "${pauses:-0}" 1 "$name: pauses"
}

run one-system-z     --readers 1 --affinity system -z
run one-plain        --readers 1 --no-compress
run two-smt-plain    --readers 2 --affinity smt --no-compress
run cache-z3         --affinity cache -z3
run numa             --affinity numa
echo ok
