# precordd's export across restarts: the file finished at a stop is exported at the next start
# (the files exported before are not again); a run with export off leaves nothing to catch up
# for the next run with it on.
. "$(dirname "$0")/daemon_lib.sh"

"$W/spin_threads" 2 > /dev/null &
EXTRA_CLEANUP="kill $! 2>/dev/null"
conf on.conf socket_group=none call_graph=fp unwind=no rotate_interval=0 pprof=yes
conf off.conf socket_group=none call_graph=fp unwind=no rotate_interval=0
st() { "$PRECORD" ctl -s "$T/ctl.sock" status | awk -v k="$1" '$1 == k { print $2 }'; }
# wait_exported N: until N profiles are exported and nothing is queued
wait_exported() {
	i=0
	while [ "$(st exported)" != "$1" ] || [ "$(st exporting)" != 0 ]; do
		i=$((i + 1)); [ $i -lt 600 ] || { "$PRECORD" ctl -s "$T/ctl.sock" status; cat "$T/daemon.log"; fail "not $1 exported in 60 s"; }
		sleep 0.1
	done
}
profiles() { find out -maxdepth 1 -name '*.pb.gz' | sort; }
# up N: the daemon's Nth READY=1 (the notify output keeps those of the runs before)
up() {
	i=0
	while [ "$(count_msgs '^READY=1')" -lt "$1" ]; do
		i=$((i + 1)); [ $i -lt 200 ] || { cat "$T/daemon.log"; fail "no READY=1 number $1 in 20 s"; }
		sleep 0.1
	done
}

start_listener
start_daemon on.conf
up 1
"$PRECORD" ctl -s "$T/ctl.sock" rotate > rot.out || { cat rot.out; fail "ctl rotate exit $?"; }
first=$(awk '$1 == "closed" { print $2 }' rot.out)
wait_exported 1
assert_eq "$(profiles)" "out/${first%.data}.pb.gz" "profiles after the rotation"
ls -li "out/${first%.data}.pb.gz" > first.ls
stop_daemon TERM
assert_eq "$DRC" 0 "exit status"
last=$(closed_files out | tail -1)
[ "$last" != "out/$first" ] || fail "no file finished at the stop"
[ ! -e "${last%.data}.pb.gz" ] || fail "the file finished at the stop was exported during the stop"

# the next start exports the file finished at the stop, and only it
start_daemon on.conf
up 2
wait_exported 1
[ -s "${last%.data}.pb.gz" ] || { ls -la out; cat "$T/daemon.log"; fail "the file finished at the stop was not exported at the start"; }
gzip -t "${last%.data}.pb.gz" || fail "its profile is not gzip'd"
ls -li "out/${first%.data}.pb.gz" | cmp -s - first.ls || fail "the profile exported before was written again"
grep -q "exporting 1 file the previous run finished after its last export" "$T/daemon.log" ||
	{ cat "$T/daemon.log"; fail "no log line about the catch-up"; }
stop_daemon TERM

# a run with export off: what it records is not exported by the next run with it on
start_daemon off.conf
up 3
stop_daemon TERM
n=$(profiles | wc -l)
start_daemon on.conf
up 4
assert_eq "$(st exporting)$(st exported)" 00 "files queued for export after a run with export off"
assert_eq "$(profiles | wc -l)" "$n" "profiles"
stop_daemon TERM
assert_eq "$DRC" 0 "exit status"
echo ok
