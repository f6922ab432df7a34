# The --lossless guarantee over its settings (issue 10): every run either loses nothing (exit 0,
# "0 lost", perf report --stats finds no LOST / LOST_SAMPLES and reads the file quietly) or is
# refused before the command ran (exit 2, the smallest -m named, the command never started).
# Factors: DWARF stack 8K/16K/32K/65528; -m left to precord or -m 64; -F 4000/20000/50000;
# --switch-events on/off; a 4-thread storm, a 16-thread storm, a fork/exec tree (8 children,
# every other one exec'ing a shell loop) or -p on a running storm; a CPU hog at the same nice
# level on every CPU (stress-ng) on/off. `make check` runs a pairwise covering of the factors
# (16 runs: every pair of values meets at least once); LOSSLESS_MATRIX=full runs all 384 (about
# 40 minutes here, past tests/run.sh's 300 s limit: run the script itself, e.g.
# LOSSLESS_MATRIX=full PRECORD_TOP=$PWD PATH=$PWD:$PATH sh tests/integration/test_lossless_guarantee.sh).
# With LOSSLESS_AT_MIN=1 a refused -m is run again with the minimum it named, which must then
# be honoured with 0 lost (the harshest accepted setting; not in make check: at a load of 30 a
# -p storm under the CPU hog at its minimum ring, -m 2048 at -F 50000 with 16 KiB stacks, lost
# 599 samples, and a run that fails with the load has no place in make check until that is
# fixed).
# -m left out must never be refused, and its ring has room above the high mark for the pause's
# reaction as precord timed it at the start (at least 2 ms).
. "$(dirname "$0")/lib.sh"

# yields per storm thread: short runs for make check's subset, longer for the full matrix
if [ "${LOSSLESS_MATRIX:-}" = full ]; then N=${LOSSLESS_STORM_COUNT:-20000}; else N=${LOSSLESS_STORM_COUNT:-2000}; fi
command -v stress-ng > /dev/null || HOG_MISSING=1
hog=
cleanup() {
	[ -n "$hog" ] && kill "$hog" 2>/dev/null
	[ -n "${bg:-}" ] && kill -KILL "$bg" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

# the fork/exec tree, its storms COUNT yields each
tree_cmd() {
	echo "for i in 1 2 3 4 5 6 7 8; do if [ \$((i % 2)) = 0 ]; then sh -c 'i=0; while [ \$i -lt 2000 ]; do i=\$((i + 1)); done' & else $W/yield_storm $1 1 & fi; done; wait"
}

hog_up() { [ "$(pgrep -c -P "$hog" stress-ng)" -ge "$(nproc)" ]; }
# rec ARGS: precord, killed after 2 minutes (a row takes seconds): a hang then fails its row,
# with precord's stderr shown, instead of the whole test at run.sh's limit (137: killed).
rec() { timeout -s KILL 120 precord "$@"; }

# samples_in FILE: the SAMPLE records in FILE so far (0 when it cannot be read yet)
samples_in() {
	preport -q -i "$1" --stats 2> /dev/null | awk '$1 == "SAMPLE" { print $3; f = 1; exit } END { if (!f) print 0 }'
}

# check NAME RC: the run's verdict from its exit status, stderr and file
check() {
	name=$1 rc=$2
	if [ "$rc" = 2 ] && [ "$m" != auto ] && [ -z "${at_min:-}" ]; then
		grep -q "the minimum is -m [0-9]* " "$name.err" || { cat "$name.err"; fail "$name: exit 2 without naming the minimum"; }
		[ ! -e ran ] || fail "$name: refused, but the command ran"
		refused_min=$(sed -n 's/.*the minimum is -m \([0-9]*\) .*/\1/p' "$name.err")
		echo "$name: refused (-m $refused_min)"
		return
	fi
	[ "$rc" = 0 ] || { cat "$name.err"; fail "$name: precord exit $rc"; }
	# the ring precord picks has room above the high mark for the reaction it measured
	if [ "$m" = auto ]; then
		sizing=$(sed -n 's/.*so \([0-9.]*\) ms are allowed for; above the high mark, room for \([0-9.]*\) ms.*/\1 \2/p' "$name.err")
		[ -n "$sizing" ] || { cat "$name.err"; fail "$name: no ring sizing notice"; }
		echo "$sizing" | awk '{ exit !($1 >= 2.0 && $2 >= $1) }' ||
			{ cat "$name.err"; fail "$name: allowed/room (ms) $sizing"; }
	fi
	grep -q "^\[ precord: 0 lost \]" "$name.err" || { cat "$name.err"; fail "$name: summary does not say 0 lost"; }
	perf report -i "$name.data" --stats > "$name.stats" 2> "$name.perr" || fail "$name: perf report --stats exit $?"
	[ ! -s "$name.perr" ] || { cat "$name.perr"; fail "$name: perf report wrote to stderr"; }
	! grep -qE "^ *LOST(_SAMPLES)? events" "$name.stats" || { cat "$name.err"; fail "$name: perf report --stats shows losses"; }
	ns=$(awk '$1 == "SAMPLE" && $2 == "events:" { print $3; f = 1; exit } END { if (!f) print 0 }' "$name.stats")
	[ "$ns" -ge 1 ] || { cat "$name.err"; fail "$name: no sample recorded"; }
	echo "$name: 0 lost, $ns samples; $(grep -o '[0-9]* pauses, [0-9.]* s paused' "$name.err")"
	rm -f "$name.data"
}

run() { # STACK WORKLOAD FREQ M SWITCH HOG
	stack=$1 wl=$2 freq=$3 m=$4 sw=$5 h=$6
	name="$stack-$wl-F$freq-m$m-sw$sw-hog$h"
	if [ "$h" = on ] && [ -n "${HOG_MISSING:-}" ]; then
		echo "$name: skipped (no stress-ng)"
		return
	fi
	set -- -e cpu-clock -F "$freq" --call-graph "dwarf,$stack" --lossless -o "$name.data"
	# Under the hog each sched_yield hands the CPU to it for a time slice: fewer yields.
	n=$N
	[ "$h" = off ] || n=$((N / 10))
	[ "$m" = auto ] || set -- "$@" -m "$m"
	[ "$sw" = off ] || set -- "$@" --switch-events
	rm -f ran
	t0=$(date +%s%N)
	# The hog's workers run before precord starts (else a quick row ran beside no hog), and it
	# ends by itself should a kill miss it while it starts them.
	[ "$h" = off ] || { stress-ng --cpu "$(nproc)" --timeout 120 --quiet & hog=$!
		wait_until "stress-ng's workers" hog_up; }
	rc=0
	case $wl in
	storm4) rec "$@" -- sh -c ": > ran; exec $W/yield_storm $n 4" 2> "$name.err" || rc=$? ;;
	storm16) rec "$@" -- sh -c ": > ran; exec $W/yield_storm $((n / 4)) 16" 2> "$name.err" || rc=$? ;;
	tree) rec "$@" -- sh -c ": > ran; $(tree_cmd $((n / 4)))" 2> "$name.err" || rc=$? ;;
	pid)
		# a storm held in a spinning shell until precord's events are on: until its samples
		# are in the file (the file's header alone came before the events were enabled,
		# and a quick storm then ran unrecorded: a row of 0 samples passed)
		rm -f go
		sh -c "while [ ! -e go ]; do :; done; : > ran; exec $W/yield_storm $n 4" &
		bg=$!
		rec "$@" -p "$bg" 2> "$name.err" &
		rec=$!
		while kill -0 "$rec" 2>/dev/null && [ "$(samples_in "$name.data")" -lt 1 ]; do sleep 0.05; done
		: > go
		wait "$rec" || rc=$?
		wait "$bg" || true
		bg=
		# refused: nothing was opened, the storm ran alone
		[ "$rc" != 2 ] || rm -f ran
		;;
	esac
	[ -z "$hog" ] || { kill "$hog" 2>/dev/null || true; wait "$hog" 2>/dev/null || true; hog=; }
	refused_min=
	check "$name" "$rc"
	echo "    ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"
	# refused: the smallest ring it named must then be honoured, pauses and all (the harshest
	# setting accepted: the pause path, the backstop and the freezer at work)
	if [ -n "$refused_min" ] && [ -n "${LOSSLESS_AT_MIN:-}" ]; then
		at_min=1
		run "$stack" "$wl" "$freq" "$refused_min" "$sw" "$h"
		at_min=
	fi
}

if [ "${LOSSLESS_MATRIX:-}" = full ]; then
	# Every row runs (a failing one is counted, the others go on); LOSSLESS_MATRIX_FROM=NAME
	# starts at the row of that name.
	failed=0
	started=${LOSSLESS_MATRIX_FROM:+no}
	for stack in 8192 16384 32768 65528; do
		for wl in storm4 storm16 tree pid; do
			for freq in 4000 20000 50000; do
				for m in auto 64; do
					for sw in on off; do
						for h in off on; do
							if [ "${started:-yes}" = no ]; then
								[ "$stack-$wl-F$freq-m$m-sw$sw-hog$h" = "$LOSSLESS_MATRIX_FROM" ] || continue
								started=yes
							fi
							(run $stack $wl $freq $m $sw $h) || failed=$((failed + 1))
						done
					done
				done
			done
		done
	done
	[ "$failed" = 0 ] || fail "$failed runs of the full matrix failed"
else
	# pairwise: each pair of values of any two factors meets in at least one row
	while read -r stack wl freq m sw h; do
		run "$stack" "$wl" "$freq" "$m" "$sw" "$h"
	done <<'ROWS'
16384 storm4 20000 auto off on
8192 storm16 50000 64 on off
32768 tree 4000 auto off off
65528 pid 4000 64 on on
32768 storm4 20000 64 on off
65528 storm16 50000 auto off on
8192 pid 20000 auto off off
16384 tree 50000 64 on on
8192 storm4 4000 64 off on
32768 pid 50000 auto on on
16384 storm16 4000 64 on off
65528 tree 20000 auto on off
32768 storm16 20000 auto on on
65528 storm4 50000 auto off off
16384 pid 50000 64 off on
8192 tree 4000 auto on on
ROWS
fi
echo ok
