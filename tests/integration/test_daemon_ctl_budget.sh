#!/bin/sh
# A control recording may hold a quarter of max_total_size. When the description of the process
# alone passes that (a small budget, a process with many executable mappings), the client is
# refused with a message that names the setting that limits it, max_total_size (not precord's
# --max-size, which a client does not have), no file is left, and the daemon goes on; a process
# whose description fits is recorded under the same budget.
. "$(dirname "$0")/daemon_lib.sh"

[ -x "$W/map_then_fifo" ] || fail "the map_then_fifo workload is missing (make test-bins)"
conf d.conf frequency=49 rotate_size=64K max_total_size=256K control_max_duration=10m
start_listener
start_daemon d.conf
wait_ready
S="$T/ctl.sock"

# 1500 mappings of a file with a long name: each is a record of some 200 bytes, 300 KB in all
long="$T/$(printf 'a%.0s' $(seq 1 150)).so"
cp "$W/map_then_fifo" "$long"
"$W/map_then_fifo" "$long" 600 1500 > maps.out &
mpid=$!
EXTRA_CLEANUP="kill -KILL $mpid 2>/dev/null"
wait_until "map_then_fifo's 1500 mappings" has_line maps.out
mkdir c
rc=0; (cd c && "$PRECORD" ctl -s "$S" record -p "$mpid" -d 5 -o big.data) 2> big.err || rc=$?
cat big.err
assert_eq "$rc" 1 "a recording whose description passes the budget: exit status"
grep -q "the description of the running processes alone passes the size limit of 65536 bytes" big.err ||
	fail "the refusal does not say what passes what"
grep -q "max_total_size in precordd.conf" big.err || fail "the refusal does not name max_total_size"
! grep -q -e '--max-size' big.err || fail "the refusal names precord's --max-size, which the client does not have"
[ ! -e c/big.data ] || fail "a refused recording left a file"
kill "$mpid"

# the daemon goes on: a small process is recorded under the same budget
"$W/map_then_fifo" "$W/map_then_fifo" 600 > small.out &
spid=$!
EXTRA_CLEANUP="kill -KILL $mpid $spid 2>/dev/null"
wait_until "map_then_fifo's mapping" has_line small.out
(cd c && "$PRECORD" ctl -s "$S" record -p "$spid" -d 1 -o small.data) 2> small.err ||
	{ cat small.err; fail "recording a small process failed"; }
kill "$spid"
[ -s c/small.data ] || fail "no file for the small process"
perf report -i c/small.data --stats > /dev/null 2>&1 || fail "perf cannot read the small recording"
kill -0 "$DPID" || fail "precordd ended"
echo ok
