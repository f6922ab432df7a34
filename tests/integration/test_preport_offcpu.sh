# preport --off-cpu and --wall on a workload with known time shares (tests/workloads/offcpu_shares:
# a thread spins 1 s of CPU; another sleeps 300 ms in nanosleep, blocks ~200 ms on a pipe, spins
# 100 ms; a third writes the pipe 500 ms after the start). The workload measures each blocking
# call and each thread's lifetime itself, so a busy machine changes the numbers but not their
# agreement:
#  - each blocking stack's off-CPU time (folded, in ns) is within 5% of what the thread measured,
#    in the off-CPU view and in the wall-clock view;
#  - each thread's on-CPU + off-CPU time is its lifetime as perf script shows it (first switch-in
#    to its EXIT record) within 2%, and its wall-clock total (on-CPU samples + off-CPU) too;
#  - the spinner's on-CPU time is its scheduled time in perf script's switch records, and at
#    least the 1 s of CPU it spun;
#  - the flame graph counts ns; files without what a view needs are refused with the remedy.
. "$(dirname "$0")/lib.sh"

precord -q --off-cpu -e cpu-clock -o shares.data -- "$W/offcpu_shares" > shares.out 2> rec.err ||
	{ cat rec.err; fail "precord --off-cpu exit $?"; }
cat shares.out
perf_clean shares.data
measured() { sed -n "s/^.* $1 \([0-9.]*\).*/\1/p" shares.out | head -n 1; }
tid_of() { sed -n "s/^$1 tid \([0-9]*\) .*/\1/p" shares.out; }
# within A B PCT: |A - B| <= PCT% of B
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * p / 100) }'; }
# sum of the folded lines (ns) whose stack holds frame $2 (and, with $3, starts with comm $3)
stack_s() { awk -v f=";$2;" -v c="${3:-}" 'index($0, f) && (c == "" || index($0, c ";") == 1) { s += $NF } END { printf "%.6f\n", s / 1e9 }' "$1"; }

preport -i shares.data --off-cpu --folded > off.folded 2> off.err || { cat off.err; fail "preport --off-cpu --folded exit $?"; }
preport -i shares.data --wall --folded > wall.folded 2> wall.err || { cat wall.err; fail "preport --wall --folded exit $?"; }
for view in off wall; do
	for f in sleep_300ms read_pipe_200ms; do
		want=$(measured "$f") got=$(stack_s "$view.folded" "$f")
		echo "$view: $f: $got s in preport, $want s measured by the thread"
		within "$got" "$want" 5 || fail "$view: off-CPU time of $f: $got s, measured $want s"
	done
done
grep -q ';\[sleeping\] [0-9]*$' off.folded || fail "no [sleeping] leaf in the off-CPU stacks"
# spin_1s is a tail call at -O2: the spinner's on-CPU stacks end in spin_cpu
! grep -q '^spinner;.*;spin_cpu [0-9]*$' off.folded || fail "an on-CPU stack in the off-CPU view"
grep -q '^spinner;.*;spin_cpu [0-9]*$' wall.folded || fail "no on-CPU stack of the spinner in the wall-clock view"

# per thread: preport's table against perf script's first switch-in and EXIT of each thread
preport -i shares.data --off-cpu -g none > off.txt 2> off.err || { cat off.err; fail "preport --off-cpu exit $?"; }
grep -q "^# Samples: .* of event 'offcpu-time'" off.txt || { cat off.txt; fail "the off-CPU table does not name offcpu-time"; }
perf script -i shares.data --show-task-events --show-switch-events -F tid,time 2>/dev/null > task.txt
for th in spinner blocker writer; do
	tid=$(tid_of "$th")
	[ -n "$tid" ] || fail "no tid for $th"
	row=$(awk -v t="$tid" '$1 ~ /^[0-9]+$/ && $2 == t { print }' off.txt)
	[ -n "$row" ] || { cat off.txt; fail "no thread row for $th ($tid)"; }
	life=$(echo "$row" | awk '{ print $4 / 1000 }') sum=$(echo "$row" | awk '{ print ($5 + $6) / 1000 }')
	perf_life=$(awk -v t="$tid" '$1 == t && /SWITCH IN/ && !first { first = $2 + 0 }
		$1 == t && /PERF_RECORD_EXIT/ { exit_t = $2 + 0 } END { printf "%.6f\n", exit_t - first }' task.txt)
	wall=$(awk -v c="$th;" 'index($0, c) == 1 { s += $NF } END { printf "%.6f\n", s / 1e9 }' wall.folded)
	echo "$th ($tid): on+off $sum s, lifetime $life s, perf script $perf_life s, wall-clock $wall s, thread's own $(sed -n "s/^$th tid $tid lifetime \([0-9.]*\).*/\1/p" shares.out) s"
	within "$sum" "$life" 0.1 || fail "$th: on-CPU + off-CPU $sum s is not its lifetime $life s"
	within "$sum" "$perf_life" 2 || fail "$th: on-CPU + off-CPU $sum s, perf script's lifetime $perf_life s"
	within "$wall" "$perf_life" 2 || fail "$th: wall-clock total $wall s, perf script's lifetime $perf_life s"
done
# The spinner's on-CPU time is the time it was scheduled, as perf script's switch records give it
# (each switch-in to the next switch-out, the last to its EXIT), and at least the 1 s of CPU it
# spun: more when the host held its virtual CPU meanwhile (1.16 s in a clean-clone run).
spin_tid=$(tid_of spinner)
spin_on=$(awk -v t="$spin_tid" '$1 ~ /^[0-9]+$/ && $2 == t { print $5 / 1000 }' off.txt)
spin_sched=$(awk -v t="$spin_tid" '$1 != t { next } /SWITCH IN/ { if (!on) on = $2 + 0; next }
	(/SWITCH OUT/ || /PERF_RECORD_EXIT/) && on { s += $2 - on; on = 0 } END { printf "%.6f\n", s }' task.txt)
echo "spinner: on-CPU $spin_on s, scheduled $spin_sched s in perf script, spun 1 s of CPU"
within "$spin_on" "$spin_sched" 2 || fail "spinner's on-CPU time $spin_on s, perf script's switch records say $spin_sched s"
awk -v a="$spin_on" 'BEGIN { exit !(a >= 0.97) }' || fail "spinner's on-CPU time $spin_on s, it spun 1 s of CPU"

preport -i shares.data --off-cpu --flamegraph fg.svg > /dev/null 2>&1 || fail "preport --off-cpu --flamegraph exit $?"
grep -q 'sleep_300ms' fg.svg || fail "flame graph without sleep_300ms"
grep -q '[0-9] ns' fg.svg || fail "flame graph does not count ns"

# pprof: go tool pprof reads the off-CPU profile as a time profile, blocking stacks as above
export HOME="$T/home" GOCACHE="$T/gocache" GOPROXY=off GOFLAGS=
mkdir -p "$HOME"
preport -i shares.data --off-cpu --pprof off.pb.gz > off.out 2> e.txt || { cat e.txt; fail "preport --off-cpu --pprof exit $?"; }
[ ! -s off.out ] || { head -5 off.out; fail "preport --off-cpu --pprof printed a report (the man page: nothing is printed)"; }
go tool pprof -top -unit=ms off.pb.gz > top.txt 2> e.txt || { cat e.txt; fail "go tool pprof cannot read the off-CPU profile"; }
grep -q '^Type: offcpu-time' top.txt || { head top.txt; fail "the pprof profile's type is not offcpu-time"; }
got=$(awk '$NF == "sleep_300ms" { v = $4; sub("ms", "", v); printf "%.6f\n", v / 1000 }' top.txt)
echo "pprof: sleep_300ms: $got s"
within "${got:-0}" "$(measured sleep_300ms)" 5 || fail "pprof: off-CPU time of sleep_300ms: $got s"

# refusals
precord -q -e cpu-clock -o plain.data -- "$W/offcpu_shares" > /dev/null 2>&1 || fail "plain recording"
rc=0; preport -i plain.data --off-cpu > /dev/null 2> e.txt || rc=$?
assert_eq "$rc" 2 "exit status of --off-cpu on a file without sched_switch"
grep -q "record with precord --off-cpu" e.txt || { cat e.txt; fail "message of --off-cpu on a plain file"; }
rc=0; preport -i shares.data --off-cpu --wall > /dev/null 2> e.txt || rc=$?
assert_eq "$rc" 2 "exit status of --off-cpu --wall"
echo ok
