# precordd's push spool across a restart: profiles an earlier run left in OUTPUT_DIR/.push are
# pushed at start, oldest first; beyond push_spool_size the oldest are dropped (and counted);
# one the server refuses with a 4xx is dropped, not retried forever; a valid one arrives with
# the from/until of its name. Then a reload that sets push_url = none empties the spool.
. "$(dirname "$0")/daemon_lib.sh"

[ -x "$TOOLS/ingest_recv" ] || skip "ingest_recv is not built (make test-bins)"
RPID=
EXTRA_CLEANUP="[ -n \"\$RPID\" ] && kill \$RPID"
mkdir recv
"$TOOLS/ingest_recv" "$T/recv" > recv.out 2>&1 &
RPID=$!
for _ in $(seq 100); do [ -s recv/port ] && break; sleep 0.05; done
[ -s recv/port ] || { cat recv.out; fail "ingest_recv did not listen"; }
PORT=$(cat recv/port)

# the spool an earlier run left: two 40000-byte entries that are not profiles, the older first,
# and a real profile, the newest; 64K holds the last two only
"$PRECORD" -q -e cpu-clock -F 499 --call-graph fp -o small.data -- sh -c "'$W/unw_chain' 200; exit 0" \
	> /dev/null 2>&1 || fail "precord failed"
preport -q -i small.data --pprof small.pb.gz || fail "preport --pprof failed"
# (names as precordd writes them: FROM-UNTIL-FILE.pb.gz, FROM and UNTIL in 12 digits)
mkdir -p out/.push
a=out/.push/001700000000-001700000060-precord-00000001-20231114T221320Z.pb.gz
b=out/.push/001700000060-001700000120-precord-00000002-20231114T221420Z.pb.gz
c=out/.push/001700000120-001700000180-precord-00000003-20231114T221520Z.pb.gz
head -c 40000 /dev/zero | tr '\0' x > "$a"
head -c 40000 /dev/zero | tr '\0' y > "$b"
cp small.pb.gz "$c"
touch out/.push/notes.txt # not a spool entry: left alone

conf d.conf socket_group=none continuous=no "push_url=http://127.0.0.1:$PORT" push_spool_size=64K
start_listener
start_daemon d.conf
wait_ready
st() { "$PRECORD" ctl -s "$T/ctl.sock" status | awk -v k="$1" '$1 == k { print $2 }'; }
i=0
while [ "$(st pushed)" != 1 ] || [ "$(st push_rejected)" != 1 ]; do
	i=$((i + 1)); [ $i -lt 600 ] || { "$PRECORD" ctl -s "$T/ctl.sock" status; cat "$T/daemon.log"; fail "the spool was not pushed in 60 s"; }
	sleep 0.1
done
assert_eq "$(st spool_dropped)" 1 "entries dropped beyond push_spool_size"
assert_eq "$(st spooled)" 0 "entries left in the spool"
assert_eq "$(st spool_bytes)" 0 "bytes left in the spool"
[ ! -e "$a" ] && [ ! -e "$b" ] && [ ! -e "$c" ] || { ls -la out/.push; fail "the spool was not emptied"; }
[ -e out/.push/notes.txt ] || fail "a file that is not a spool entry was deleted"
grep -q "dropped ${a#out/.push/}: the spool is over push_spool_size (65536 bytes)" "$T/daemon.log" ||
	{ cat "$T/daemon.log"; fail "no log line for the entry dropped beyond the spool's size"; }
grep -q "dropped ${b#out/.push/}: the server answered 400" "$T/daemon.log" ||
	{ cat "$T/daemon.log"; fail "no log line for the entry the server refused"; }
# the receiver: b refused (not gzip'd), c taken with the span of its name
assert_eq "$(grep -c '^rejected 400 the profile is not gzip' recv/log)" 1 "requests refused as not gzip'd"
assert_eq "$(grep -c '^ok' recv/log)" 1 "profiles taken"
set -- $(grep '^ok' recv/log)
assert_eq "$3 $4" "1700000120 1700000180" "from and until of the pushed profile"
cmp -s small.pb.gz "$6" || fail "the pushed profile is not the one spooled"

# push_url = none: what waits in the spool is dropped at the reload
cp small.pb.gz "$c"
conf d.conf socket_group=none continuous=no
kill -HUP "$DPID"
wait_for "$T/daemon.log" "dropped ${c#out/.push/} from the spool: push_url is not set" 10
[ ! -e "$c" ] || fail "the spool kept a profile with push_url unset"
stop_daemon TERM
assert_eq "$DRC" 0 "exit status"
echo ok
