# --lossless on a small sched_yield storm (2 threads per CPU) with exactly the settings on which
# perf record loses events (ring size left to precord, which derives it): precord exits 0, the file has no LOST / LOST_SAMPLES, perf reads it
# cleanly, and every sample and switch is there.
#   switches: the storm counts its own context switches (getrusage, every thread); each switch
#     is an out and an in record, so SWITCH ~ 2 x switches. Measured on this machine the file
#     holds 2 x switches + 35..120, whatever the number of switches: each thread's first
#     switch-in has no switch before it, and a thread switches a few times on its way out
#     after it read its counters. Tolerance: 2S <= SWITCH <= 2S + 50 per thread + 0.5%; a
#     lost record would show as SWITCH < 2S, a slice written twice as far more.
#   samples: the kernel counts what it could not write (PERF_FORMAT_LOST, read per CPU at the
#     end, stored as LOST_SAMPLES): samples in the file + lost = generated, so none lost and
#     the file's count equal to what the readers took from the rings means all are there.
#     As a sanity check against the CPU time the storm used (20 kHz = one per 50 us), about
#     50-70% of that arrives here (cpu-clock's timer does not run in the switch path itself):
#     30% to 110% is accepted.
. "$(dirname "$0")/lib.sh"

threads=$((2 * $(nproc)))
count=${STORM_COUNT:-20000}
YIELD_STORM_REPORT=1 precord -e cpu-clock -F 20000 --switch-events --call-graph dwarf --lossless \
	-o ours.data -- "$W/yield_storm" "$count" "$threads" 2> rec.err || { cat rec.err; fail "precord --lossless exit $?"; }
cat rec.err
grep -q "^\[ precord: 0 lost \]" rec.err || fail "summary does not say 0 lost"
grep -q "lossless via " rec.err || fail "no lossless line in the summary"
perf_clean ours.data

perf report -i ours.data --stats > stats.txt 2>/dev/null
grep -E "LOST|SAMPLE events|SWITCH" stats.txt || true
! grep -qE "^ *LOST(_SAMPLES)? events" stats.txt || fail "perf report --stats shows losses"
grep -q "Lost" stats.txt && fail "perf report --stats mentions lost events"

count_of() { awk -v t="$1" '$1 == t && $2 == "events:" { print $3; f = 1; exit } END { if (!f) print 0 }' stats.txt; }
sw=$(count_of SWITCH)
smp=$(count_of SAMPLE)
S=$(sed -n 's/^yield_storm: threads [0-9]* switches \([0-9]*\) cpu_us [0-9]*$/\1/p' rec.err)
cpu_us=$(sed -n 's/^yield_storm: .* cpu_us \([0-9]*\)$/\1/p' rec.err)
[ -n "$S" ] && [ -n "$cpu_us" ] || fail "no switch report from yield_storm"
echo "storm: $S switches, $cpu_us us CPU; file: $sw SWITCH, $smp SAMPLE"

assert_ge "$sw" $((2 * S)) "SWITCH records (2 x $S switches)"
assert_le "$sw" $((2 * S + 50 * (threads + 1) + 2 * S / 200)) "SWITCH records (2 x $S switches)"

# what the readers took from the rings, per the summary, is what perf finds in the file
read_smp=$(sed -n 's/^\[ precord: [0-9.]* s, \([0-9]*\) samples.*/\1/p' rec.err)
read_sw=$(sed -n 's/.* \([0-9]*\) context switches \]$/\1/p' rec.err)
assert_eq "$smp" "$read_smp" "samples in the file vs read from the rings"
assert_eq "$sw" "$read_sw" "switches in the file vs read from the rings"
expect=$((cpu_us / 50))
assert_ge "$smp" $((expect * 30 / 100)) "samples vs CPU time ($expect at 20 kHz)"
assert_le "$smp" $((expect * 110 / 100)) "samples vs CPU time ($expect at 20 kHz)"

# The watchers (one per CPU) look at the rings only as often as their margins require: on a
# quiet command, every 2 ms at most (the one watcher of before used to look every 0.4 ms whatever
# the rings held, 0.1 ms once one was 10% full), so at most ~500 looks a second each: a busy
# machine can only make them look less often, so that bound holds under any load. That they run
# at all is shown by a count of looks, not by a rate, which would depend on how often a busy
# machine lets them run.
precord -v --lossless -o quiet.data -- sleep 1 2> quiet.err || { rc=$?; cat quiet.err; fail "precord --lossless on sleep: exit $rc"; }
looks=$(sed -n 's/^\[ precord: \([0-9]*\) looks at the rings by the lossless watchers ([0-9]*\/s) \]$/\1/p' quiet.err)
rate=$(sed -n 's/^\[ precord: [0-9]* looks at the rings by the lossless watchers (\([0-9]*\)\/s) \]$/\1/p' quiet.err)
[ -n "$rate" ] && [ -n "$looks" ] || { cat quiet.err; fail "no watcher look count with -v"; }
echo "watchers on a quiet command: $looks looks, $rate looks/s"
assert_le "$rate" $((600 * $(nproc))) "watcher looks per second on a quiet command ($(nproc) watchers)"
assert_ge "$looks" 10 "watcher looks on a quiet command of 1 s"
echo ok
