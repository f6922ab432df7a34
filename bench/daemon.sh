# Sourced by bench/run.sh (section "daemon"): precordd's memory over a long run of rotations.
# The daemon records the whole system at 999 Hz with files rotated every 500 ms or 256 KiB
# and a 2 MiB budget, so it rotates (synthesizing /proc into each new file) and deletes files
# continuously; a control-socket status every second. RSS is read from /proc at the start
# (once recording has settled, after 2 s) and at the end. DAEMON_BENCH_SECONDS (default 600)
# sets the length: at least 10 minutes of simulated rotations by default.
DAEMON_BENCH_SECONDS=${DAEMON_BENCH_SECONDS:-600}
echo "## precordd: memory over ${DAEMON_BENCH_SECONDS} s of continuous rotation (999 Hz, rotate every 500 ms or 256K, budget 2M)"
echo
dd_dir="$D/daemon"
mkdir -p "$dd_dir"
cat > "$dd_dir/precordd.conf" <<EOC
frequency = 999
rotate_size = 256K
rotate_interval = 500ms
max_total_size = 2M
output_dir = $dd_dir/out
socket = $dd_dir/ctl.sock
socket_group = none
EOC
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
hwm_kib() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
ctl_field() { $P ctl -s "$dd_dir/ctl.sock" status 2>/dev/null | awk -v k="$1" '$1 == k { print $2 }'; }

$W/spin_threads "$((DAEMON_BENCH_SECONDS + 5))" > /dev/null 2>&1 &
dd_load=$!
./precordd --config "$dd_dir/precordd.conf" 2> "$dd_dir/log" &
dd_pid=$!
sleep 2
if ! kill -0 "$dd_pid" 2> /dev/null; then
	echo "precordd did not start:"; cat "$dd_dir/log"
else
	rss0=$(rss_kib "$dd_pid"); rot0=$(ctl_field rotations); t0=$(date +%s)
	end=$((t0 + DAEMON_BENCH_SECONDS))
	step=$(( (DAEMON_BENCH_SECONDS + 9) / 10 )); next=$((t0 + step))
	printf '| elapsed s | rotations | RSS KiB |\n|---|---|---|\n| 0 | 0 | %s |\n' "$rss0"
	while [ "$(date +%s)" -lt "$end" ] && kill -0 "$dd_pid" 2> /dev/null; do
		sleep 1
		ctl_field state > /dev/null
		if [ "$(date +%s)" -ge "$next" ] && [ "$next" -lt "$end" ]; then
			printf '| %s | %s | %s |\n' "$((next - t0))" "$(( $(ctl_field rotations) - rot0 ))" "$(rss_kib "$dd_pid")"
			next=$((next + step))
		fi
	done
	rss1=$(rss_kib "$dd_pid"); hwm=$(hwm_kib "$dd_pid")
	rot1=$(ctl_field rotations); del=$(ctl_field deleted); lost=$(ctl_field lost)
	disk=$(ctl_field disk_bytes)
	printf '| %s | %s | %s |\n' "$DAEMON_BENCH_SECONDS" "$((rot1 - rot0))" "$rss1"
	echo
	kill -TERM "$dd_pid"; wait "$dd_pid"; rc=$?
	printf '| seconds | rotations | files deleted | disk at end KiB | RSS start KiB | RSS end KiB | end/start | peak RSS KiB | lost | exit |\n'
	printf '|---|---|---|---|---|---|---|---|---|---|\n'
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$DAEMON_BENCH_SECONDS" \
		"$((rot1 - rot0))" "$del" "$((disk / 1024))" "$rss0" "$rss1" \
		"$(ratio "$rss1" "$rss0")" "$hwm" "$lost" "$rc"
	echo
	echo "(RSS grows at first as each reader's staging and zstd buffers reach the largest burst"
	echo "seen, at most a few MiB per reader; it should then stay flat: a later rise is a leak.)"
	echo "(each rotation finalizes a file and describes every running process in the next one; at the"
	echo "default rotate_interval of 1 h these rotations stand for $(( (rot1 - rot0) )) hours of service)"
	echo
fi
kill "$dd_load" 2> /dev/null
wait "$dd_load" 2> /dev/null || true
