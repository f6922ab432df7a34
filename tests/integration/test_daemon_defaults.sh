# precordd with the shipped defaults (49 Hz, DWARF call graphs unwound at rotation, the cgroup
# of every sample): a program without frame pointers whose chain crosses a shared library
# (unw_chain: 1 s of its own CPU time, so ~49 samples however busy the machine is), run in a
# service cgroup of its own, gets whole stacks down to main in the closed file, which holds call
# chains and no stack copies once the daemon has unwound it, and perf report --sort cgroup
# names its service.
. "$(dirname "$0")/daemon_lib.sh"

root=$(sed -n 's/^[^ ]* [^ ]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -n 1)
[ -n "$root" ] && [ -d "$root" ] || skip "no cgroup2 mount on this machine"
svc="precord-test-$$.slice/app-$$.service"
mkdir -p "$root/$svc" || skip "cannot make a cgroup under $root"
EXTRA_CLEANUP="for p in \$(cat '$root/$svc/cgroup.procs' 2>/dev/null); do kill \$p; echo \$p > '$root/cgroup.procs'; done; rmdir '$root/$svc' '$root/precord-test-$$.slice' 2>/dev/null"

grep -q '^call_graph = dwarf$' "$TOP/systemd/precordd.conf" || fail "the shipped config does not record DWARF call graphs"
conf d.conf socket_group=none
start_listener
start_daemon d.conf
wait_ready
# (unw_chain's exit status is its checksum's low bit: only the move into the cgroup counts)
sh -c "echo \$\$ > '$root/$svc/cgroup.procs' || exit 99; '$W/unw_chain' 1000; exit 0" > /dev/null ||
	fail "cannot move into $root/$svc (exit $?)"
"$PRECORD" ctl -s "$T/ctl.sock" rotate > rot.out || { cat rot.out; fail "ctl rotate exit $?"; }
closed="out/$(awk '$1 == "closed" { print $2 }' rot.out)"
[ -f "$closed" ] || { cat rot.out; ls out; fail "no closed file $closed"; }
# the daemon unwinds it in the background: wait for the status to say so
i=0
while :; do
	"$PRECORD" ctl -s "$T/ctl.sock" status > st.out
	[ "$(awk '$1 == "unwound" { print $2 }' st.out)" -ge 1 ] 2>/dev/null && break
	i=$((i + 1)); [ $i -lt 600 ] || { cat st.out "$T/daemon.log"; fail "no file unwound after 60 s"; }
	sleep 0.1
done
stop_daemon TERM
assert_eq "$DRC" 0 "exit status"
perf_stats_clean "$closed"
perf evlist -v -i "$closed" 2>/dev/null > ev.txt
! grep -qE 'STACK_USER|REGS_USER' ev.txt || { cat ev.txt; fail "the unwound file still holds stack copies"; }
grep -q 'CGROUP' ev.txt || { cat ev.txt; fail "the samples carry no cgroup"; }
# whole stacks: the samples of unw_chain reach main, through the library
perf script -i "$closed" --comm unw_chain -F ip,sym 2>/dev/null > script.txt
n=$(awk 'NF == 0 { if (s) t++; if (s && m) k++; s = 0; m = 0; next } { s = 1 } $2 == "main" { m = 1 } END { print t + 0, k + 0 }' script.txt)
echo "unw_chain's samples, and of them reaching main: $n"
set -- $n
assert_ge "$1" 20 "samples of unw_chain (1 s of CPU at 49 Hz)"
assert_ge "$(( $2 * 100 / $1 ))" 90 "percent of unw_chain's samples whose stack reaches main"
grep -q ' unw_b$' script.txt || fail "no frame in the shared library (unw_b)"
# by comm and cgroup, with perf's exit status and messages kept: a CI run once printed no row at
# all here (with --comm unw_chain), while perf script had found unw_chain's 47 samples above
rc=0; perf report -i "$closed" --stdio --no-children --sort comm,cgroup -g none -q > cg.txt 2> cg.err || rc=$?
awk -v cg="/$svc" '$2 == "unw_chain" && $3 == cg { ok = 1 } END { exit !ok }' cg.txt ||
	{ cat cg.txt cg.err; echo "perf report exit $rc"; perf report -i "$closed" --stdio --no-children --sort comm,pid,cgroup -g none 2>&1 | head -n 30; fail "perf report --sort comm,cgroup does not put unw_chain in the service"; }
echo ok
