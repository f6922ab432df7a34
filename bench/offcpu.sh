# Sourced by bench/run.sh (BENCH=offcpu): the cost of an off-CPU recording of perf bench sched pipe
# (two tasks handing a byte back and forth: every round trip is two switch-outs), perf's way
# against precord's, at equal settings: cpu-clock at the default 4000 Hz, sched:sched_switch at
# every hit with a DWARF call graph of 8 KiB, switch records, a 2 MiB ring, zstd 1. (No -F: perf
# applies an explicit -F to tracepoints too.) Medians of OFFCPU_REPS runs, alternating.
OFFCPU_REPS=${OFFCPU_REPS:-3}
OFFCPU_LOOPS=${OFFCPU_LOOPS:-$PIPE_LOOPS}
echo "## Off-CPU recording: perf bench sched pipe -l $OFFCPU_LOOPS (medians of $OFFCPU_REPS runs)"
echo
echo "perf: \`perf record -e cpu-clock,sched:sched_switch --switch-events --call-graph dwarf,8192 -m 2M -z\`;"
echo "precord: \`precord --off-cpu -e cpu-clock --call-graph dwarf,8192 -m 2M -z\` (same events), and with --lossless."
echo "Switch-outs expected: at least 2 x $OFFCPU_LOOPS (each round trip blocks both tasks once)."
echo
set -- perf bench sched pipe -l "$OFFCPU_LOOPS"
run_timed "$@"; ob=$T
: > "$D/op"; : > "$D/or"; : > "$D/ol"; : > "$D/osp"; : > "$D/osr"; : > "$D/osl"
olp=0; olr=0; oll=0; nsp=0; nsr=0; nsl=0
tp_samples() { perf script -i "$1" -F event 2>/dev/null | grep -c 'sched:sched_switch' || true; }
for rep in $(seq "$OFFCPU_REPS"); do
	run_timed perf record -e cpu-clock,sched:sched_switch --switch-events --call-graph dwarf,8192 -m 2M -z \
		-o "$D/perf-off.data" -- "$@"; echo "$T" >> "$D/op"
	run_timed $P -q --off-cpu -e cpu-clock --call-graph dwarf,8192 -m 2M -z -o "$D/precord-off.data" -- "$@"
	echo "$T" >> "$D/or"
	run_timed $P -q --off-cpu --lossless -e cpu-clock --call-graph dwarf,8192 -z -o "$D/precord-offl.data" -- "$@"
	echo "$T" >> "$D/ol"
	olp=$(plus "$olp" "$(lost_all "$D/perf-off.data")")
	olr=$(plus "$olr" "$(lost_all "$D/precord-off.data")")
	oll=$(plus "$oll" "$(lost_all "$D/precord-offl.data")")
	size_of "$D/perf-off.data" >> "$D/osp"; size_of "$D/precord-off.data" >> "$D/osr"
	size_of "$D/precord-offl.data" >> "$D/osl"
	nsp=$(tp_samples "$D/perf-off.data"); nsr=$(tp_samples "$D/precord-off.data"); nsl=$(tp_samples "$D/precord-offl.data")
done
tp=$(median "$D/op"); tr=$(median "$D/or"); tl=$(median "$D/ol")
printf '| recorder | wall s | slowdown | lost (all runs) | switch-out samples (last run) | MB |\n|---|---|---|---|---|---|\n'
printf '| bare | %s | 1.00x | - | - | - |\n' "$ob"
printf '| perf record | %s | %sx | %s | %s | %s |\n' "$tp" "$(ratio "$tp" "$ob")" "$olp" "$nsp" "$(mb "$(median "$D/osp")")"
printf '| precord --off-cpu | %s | %sx | %s | %s | %s |\n' "$tr" "$(ratio "$tr" "$ob")" "$olr" "$nsr" "$(mb "$(median "$D/osr")")"
printf '| precord --off-cpu --lossless | %s | %sx | %s | %s | %s |\n' "$tl" "$(ratio "$tl" "$ob")" "$oll" "$nsl" "$(mb "$(median "$D/osl")")"
echo
echo "precord/perf time: $(ratio "$tr" "$tp"); --lossless/perf: $(ratio "$tl" "$tp"); size precord/perf: $(ratio "$(median "$D/osr")" "$(median "$D/osp")")"
echo
