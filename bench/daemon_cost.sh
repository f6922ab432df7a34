# Sourced by bench/run.sh (section "daemon-cost"): what precordd costs with the shipped defaults
# (system-wide, 49 Hz, DWARF stacks unwound into call chains once each file is closed, the cgroup
# of every sample) on a busy machine: a C++ program without frame pointers on every CPU for
# DAEMON_COST_SECONDS (default 120). CPU is the daemon's own time plus its unwinding children's,
# from /proc/PID/stat, over wall time; disk is what the closed, unwound files hold, per hour.
DAEMON_COST_SECONDS=${DAEMON_COST_SECONDS:-120}
echo "## precordd with the shipped defaults: CPU and disk over ${DAEMON_COST_SECONDS} s, busy machine"
echo
dc_dir="$D/daemon-cost"
mkdir -p "$dc_dir"
printf 'output_dir = %s/out\nsocket = %s/ctl.sock\nsocket_group = none\n' "$dc_dir" "$dc_dir" > "$dc_dir/precordd.conf"
$W/mixed "$((DAEMON_COST_SECONDS + 30))" "$NCPU" > /dev/null 2>&1 &
dc_load=$!
./precordd --config "$dc_dir/precordd.conf" 2> "$dc_dir/log" &
dc_pid=$!
sleep 1
dc_t0=$(date +%s.%N)
sleep "$DAEMON_COST_SECONDS"
# close the file and wait for its unwinding, as every rotation does
dc_name=$($P ctl -s "$dc_dir/ctl.sock" rotate 2> /dev/null | awk '$1 == "closed" { print $2 }')
i=0
while [ "$($P ctl -s "$dc_dir/ctl.sock" status 2>/dev/null | awk '$1 == "unwinding" { print $2 }')" != 0 ] && [ $i -lt 600 ]; do
	sleep 0.5; i=$((i + 1))
done
dc_t1=$(date +%s.%N)
dc_status=$($P ctl -s "$dc_dir/ctl.sock" status 2>/dev/null)
# utime stime cutime cstime (fields 14-17), in clock ticks
dc_ticks=$(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$dc_pid/stat")
kill -TERM "$dc_pid"; wait "$dc_pid"
kill "$dc_load" 2> /dev/null; wait "$dc_load" 2> /dev/null
dc_hz=$(getconf CLK_TCK)
dc_wall=$(awk -v a="$dc_t0" -v b="$dc_t1" 'BEGIN { printf "%.1f", b - a }')
dc_cpu=$(awk -v t="$dc_ticks" -v hz="$dc_hz" 'BEGIN { printf "%.2f", t / hz }')
# the file the rotation closed (the daemon's next one, finished at SIGTERM, keeps its stacks)
dc_closed="$dc_dir/out/$dc_name"
dc_bytes=$(stat -c %s "$dc_closed" 2> /dev/null || echo 0)
dc_saved=$(echo "$dc_status" | awk '$1 == "unwound_saved_bytes" { print $2 }')
dc_samples=$(echo "$dc_status" | awk '$1 == "samples" { print $2 }')
printf '| wall s | daemon CPU s | %% of one CPU | samples | file after unwinding | with stacks | per hour | per day | days in the default 1 GiB |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
awk -v w="$dc_wall" -v c="$dc_cpu" -v n="$dc_samples" -v b="$dc_bytes" -v s="${dc_saved:-0}" 'BEGIN {
	h = b * 3600 / w
	printf "| %s | %s | %.2f%% | %s | %.1f MB | %.1f MB | %.0f MB | %.0f MB | %.1f |\n",
		w, c, 100 * c / w, n, b / 1048576, (b + s) / 1048576, h / 1048576, 24 * h / 1048576,
		1073741824 / (24 * h) }'
echo
echo "(load: mixed on every CPU, plus whatever else the machine ran; the unwinding child's CPU time"
echo "is counted. Files rotate at 64 MiB or 1 h by default: the figures are per hour of service.)"
echo
