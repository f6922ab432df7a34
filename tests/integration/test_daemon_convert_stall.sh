# precordd's conversions run as precordd executed again (not a fork of the multithreaded
# service, which could block forever on a lock one of its threads held): a "precordd-unwind" or
# "precordd-export" child with "--isolated-child" on its command line. One that stops getting
# CPU time (here: stopped with SIGSTOP) is killed after convert_stall_timeout, its file is kept
# as it was, the log says why, and the next files are converted.
. "$(dirname "$0")/daemon_lib.sh"

"$W/spin_threads" 2 > /dev/null &
SPIN=$!
EXTRA_CLEANUP="kill $SPIN 2>/dev/null"
conf d.conf socket_group=none call_graph=dwarf unwind=yes pprof=yes rotate_interval=0 \
	frequency=999 convert_stall_timeout=1s

start_listener
start_daemon d.conf
wait_ready

# child: the pid of a conversion's process of the daemon, once it has executed, or nothing
child() {
	for _p in $(pgrep -P "$DPID"); do
		case "$(cat "/proc/$_p/comm" 2> /dev/null)" in
		precordd-unwind|precordd-export)
			tr '\0' ' ' < "/proc/$_p/cmdline" | grep -q -- "--isolated-child" && echo "$_p" && return ;;
		esac
	done
}

# Rotate until a conversion is caught running (each takes a fraction of a second: a try can
# miss it), then stop it.
stopped=
tries=0
while [ -z "$stopped" ]; do
	tries=$((tries + 1))
	[ $tries -le 30 ] || { cat "$T/daemon.log"; fail "no conversion caught running in 30 rotations"; }
	wait_cpu "$SPIN" 300
	"$PRECORD" ctl -s "$T/ctl.sock" rotate > /dev/null || fail "ctl rotate exit $?"
	before=$(status_field unwound)
	n=0
	while [ $n -lt 2000 ]; do
		p=$(child)
		if [ -n "$p" ] && kill -STOP "$p" 2> /dev/null; then
			stopped=$p
			break
		fi
		n=$((n + 1))
		# every 20th look: is this rotation's file done (both its conversions missed)?
		[ $((n % 20)) = 0 ] && [ "$(status_field exporting)" = 0 ] &&
			[ "$(status_field unwound)" != "$before" ] && break
	done
done
echo "stopped conversion pid $stopped ($(cat "/proc/$stopped/comm")) after $tries rotation(s)"

wait_for "$T/daemon.log" "process had no CPU time for 1 s (stopped or blocked): killed"
grep -E "cannot (unwind|export) .*process had no CPU time for 1 s" "$T/daemon.log" ||
	fail "the log does not say which file's conversion was killed"
# killed and reaped (a stopped process is no zombie: the daemon waited for it)
wait_until "pid $stopped to be gone" sh -c "! kill -0 $stopped 2> /dev/null"

# the service goes on: the next file is unwound and exported
u=$(status_field unwound)
e=$(status_field exported)
"$PRECORD" ctl -s "$T/ctl.sock" rotate > /dev/null || fail "ctl rotate exit $?"
wait_status unwound $((u + 1))
wait_status exported $((e + 1))
stop_daemon TERM
assert_eq "$DRC" 0 "exit status"
echo ok
