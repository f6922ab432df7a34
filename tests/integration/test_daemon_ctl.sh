# The control socket with real users (created here, removed at exit): a non-member is refused;
# a member may not rotate nor record another uid's process; a member recording its own process
# (by pid, and as a command precord ctl starts) gets a readable file of its own; garbage,
# oversized and silent clients get an ERR and are dropped while continuous recording goes on.
# Conditions, not times: a recording of a process lasts until that process has used a given
# CPU time (then the test ends it), the silent client waits as long as the server takes to
# drop it, and "recording goes on" is a sample count the test waits for.
. "$(dirname "$0")/daemon_lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root to create test users"
command -v useradd > /dev/null && command -v setpriv > /dev/null || skip "needs useradd and setpriv"
G=prctg$$ M=prctm$$ N=prctn$$
groupadd "$G" || skip "groupadd failed"
PIDS=
EXTRA_CLEANUP='for p in $PIDS; do kill -KILL $p 2>/dev/null; done; userdel -f $M 2>/dev/null; userdel -f $N 2>/dev/null; groupdel $G 2>/dev/null'
useradd -M -N -s /bin/sh -G "$G" "$M" || fail "useradd $M"
useradd -M -N -s /bin/sh "$N" || fail "useradd $N"
as() { u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups "$@"; }
chmod 755 "$T"                      # mktemp made it 0700: the users must reach the socket
mkdir m && chown "$M" m

user_bins "$W/spin_threads"
conf d.conf frequency=49 "socket_group=$G" rotate_size=4M max_total_size=16M control_max_duration=10m
start_listener
start_daemon d.conf
wait_ready
S="$T/ctl.sock"

# a non-member: refused, told why
rc=0; as "$N" "$UB/precord" ctl -s "$S" status > n.out 2> n.err || rc=$?
assert_eq "$rc" 1 "non-member exit status"
grep -q "permission denied: uid $(id -u "$N") is not in group $G" n.err || { cat n.err; fail "non-member message"; }

# a member: status yes, rotate no
as "$M" "$UB/precord" ctl -s "$S" status > m.out || fail "member status exit $?"
grep -q "^state  *recording" m.out || fail "member status"
rc=0; as "$M" "$UB/precord" ctl -s "$S" rotate 2> r.err || rc=$?
assert_eq "$rc" 1 "member rotate exit status"
grep -q "only root may rotate" r.err || { cat r.err; fail "member rotate message"; }

# another uid's process: refused
sleep 600 &
rootpid=$!
PIDS="$PIDS $rootpid"
rc=0; as "$M" "$UB/precord" ctl -s "$S" record -p "$rootpid" -d 1 -o m/x.data 2> o.err || rc=$?
kill "$rootpid"
assert_eq "$rc" 1 "recording another uid's process"
grep -q "the kernel refused" o.err || { cat o.err; fail "other uid message"; }
[ ! -e m/x.data ] || fail "a refused recording left a file"
rc=0; as "$M" "$UB/precord" ctl -s "$S" record -p 1 -d 1 -o m/x.data 2> o.err || rc=$?
assert_eq "$rc" 1 "recording pid 1"

# its own process, by pid: recorded until it has used 0.5 s of CPU time, then it ends (and the
# recording with it)
as "$M" "$UB/spin_threads" 3600 > pid.txt &
spin=$!
PIDS="$PIDS $spin"
wait_until "spin_threads' pid" has_line pid.txt
pid=$(head -1 pid.txt)
(cd m && as "$M" "$UB/precord" ctl -s "$S" record -p "$pid" -o own.data) 2> own.err &
rec=$!
wait_for "$T/daemon.log" "control: recording pid $pid for uid"
c0=$(thread_cpu "$pid")
wait_cpu "$pid" 500
c1=$(thread_cpu "$pid")
kill "$pid"
rc=0; wait "$rec" || rc=$?
[ "$rc" = 0 ] || { cat own.err; fail "member recording its own process: exit $rc"; }
[ "$(stat -c %U m/own.data)" = "$M" ] || fail "the file is not the member's"
as "$M" test -r m/own.data || fail "the member cannot read its file"
cp m/own.data own.data             # perf reads only its user's files (or root's)
perf_reads own.data
grep -q "wrote own.data: [0-9]* samples, 0 lost" own.err || { cat own.err; fail "summary"; }
n=$(stat_count own.data SAMPLE)
assert_ge "$n" 100 "samples of the member's process"
# spin_alpha's share of the samples is its thread's share of the CPU time (not 50%: a busy
# machine may favour either thread)
a=$(sym_pct own.data spin_alpha)
want=$(share_pct "$c0" "$c1" 2)
close_to "$a" "$want" 10 || fail "spin_alpha at $a% (its thread had $want% of the CPU time)"

# its own command, started held by precord ctl: it runs until it has used 0.5 s of CPU time
(cd m && as "$M" "$UB/precord" ctl -s "$S" record -o cmd.data -- "$UB/spin_threads" 3600) > cmd.pid 2> cmd.err &
rec=$!
wait_until "the command's pid" has_line cmd.pid
pid=$(head -1 cmd.pid)
PIDS="$PIDS $pid"
# the command runs its threads (main + 2): a reading taken before they exist has no thread 3
# (under ASan that gave an expected share of 0)
cmd_threads() { [ "$(ls "/proc/$pid/task" 2>/dev/null | wc -l)" -ge 3 ]; }
wait_until "the command's threads" cmd_threads
c0=$(thread_cpu "$pid")
wait_cpu "$pid" 500
c1=$(thread_cpu "$pid")
kill "$pid"
rc=0; wait "$rec" || rc=$?
[ "$rc" = 0 ] || { cat cmd.err; fail "member recording a command: exit $rc"; }
grep -q "target-ended" cmd.err || { cat cmd.err; fail "the recording did not end with the command"; }
cp m/cmd.data cmd.data
perf_reads cmd.data
b=$(sym_pct cmd.data spin_beta)
want=$(share_pct "$c0" "$c1" 3)
close_to "$b" "$want" 10 || fail "spin_beta of the command at $b% (its thread had $want% of the CPU time)"

# hostile clients, while recording goes on
before=$(awk '$1 == "samples" { print $2 }' m.out)
"$TOOLS/ctl_raw" "$S" --silent 600 > slow.out &
slow=$!
"$TOOLS/ctl_raw" "$S" --text '\x01\x02\xffgarbage\n' > g.out
grep -q "^ERR malformed request" g.out && grep -q "<closed>" g.out || { cat g.out; fail "garbage"; }
"$TOOLS/ctl_raw" "$S" --bytes 200000 > big.out
grep -q "^ERR request too long" big.out && grep -q "<closed>" big.out || { cat big.out; fail "oversized"; }
"$TOOLS/ctl_raw" "$S" --text 'record pid=1 pid=2\n' > dup.out
grep -q "^ERR an argument is given twice" dup.out || { cat dup.out; fail "duplicate argument"; }
"$TOOLS/ctl_raw" "$S" --text 'status\nstatus\n' > two.out
grep -q "^ERR one request per connection" two.out || { cat two.out; fail "two requests"; }
wait "$slow"
grep -q "^ERR no complete request in time" slow.out || { cat slow.out; fail "silent client"; }
kill -0 "$DPID" || fail "precordd died"
"$PRECORD" ctl -s "$S" status > /dev/null || fail "status after the hostile clients"
wait_status samples $((before + 50))
grep -q "control: pid .* uid 0: malformed request" "$T/daemon.log" || fail "refusals are not logged"

stop_daemon TERM
assert_eq "$DRC" 0 "exit status"
for f in $(closed_files out); do perf_stats_clean "$f"; done
[ -z "$(ls out/.control 2>/dev/null)" ] || fail "recordings left in out/.control"
echo "ok: refusals, member recordings ($n samples, alpha $a%, beta $b%), hostile clients dropped"
