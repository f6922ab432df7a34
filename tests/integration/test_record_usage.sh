# precord's usage errors: -p of a process that does not exist is bad usage (exit 2, named),
# --readers above the number of CPUs recorded says what it uses instead, a command that cannot
# run is refused (126/127, saying why) before the output is touched, and so is (exit 2) an -o
# naming the command itself.
. "$(dirname "$0")/lib.sh"

sh -c 'exit 0' & dead=$!
wait $dead
rc=0; precord -p "$dead" -o p.data > out 2> err || rc=$?
assert_eq "$rc" 2 "precord -p DEAD exit status"
grep -q "no process $dead to record (-p): it does not exist" err || { cat err; fail "-p DEAD: no reason"; }

rc=0; precord --readers 1000 -o r.data -- true > out 2> err || rc=$?
assert_eq "$rc" 0 "precord --readers 1000 exit status"
ncpu=$(nproc)
grep -q "^precord: --readers 1000: only $ncpu CPU" err || { cat err; fail "--readers 1000: no notice"; }
grep -q "with $ncpu reader" err || { cat err; fail "--readers 1000: summary does not say $ncpu readers"; }
# A command that cannot run is refused, with what is wrong, before the output is touched: the
# old k.data is neither renamed (nor k.data.old replaced) nor an empty recording written.
# cmd_refused CODE PATTERN ARGS...: precord -o k.data ARGS exits CODE saying PATTERN, and
# k.data and k.data.old are as they were.
cmd_refused() {
	code=$1 pat=$2; shift 2
	echo old > k.data
	echo older > k.data.old
	rc=0; precord -o k.data "$@" > out 2> err || rc=$?
	assert_eq "$rc" "$code" "precord -o k.data $*: exit status"
	grep -q -- "$pat" err || { cat err; fail "precord -o k.data $*: message lacks '$pat'"; }
	assert_eq "$(cat k.data)" old "precord -o k.data $*: k.data"
	assert_eq "$(cat k.data.old)" older "precord -o k.data $*: k.data.old"
	echo "ok: precord -o k.data $* -> $rc: $(head -n 1 err)"
}
mkdir -p pathdir/adir
: > pathdir/noexec
: > noexec
cmd_refused 126 "cannot run '/tmp': it is a directory, not a program" /tmp
cmd_refused 126 "cannot run './noexec': it is not executable" ./noexec
cmd_refused 126 "cannot run '/dev/null': it is not a regular file" /dev/null
PATH="$T/pathdir:$PATH" cmd_refused 126 "cannot run 'adir': the file found in PATH, $T/pathdir/adir, is a directory" adir
PATH="$T/pathdir:$PATH" cmd_refused 126 "cannot run 'noexec': the file found in PATH, $T/pathdir/noexec, is not executable" noexec
cmd_refused 127 "cannot run 'no-such-command-xyz': command not found" no-such-command-xyz
# execvp goes past what it cannot run: a directory named true early in PATH does not hide true
mkdir pathdir/true
rc=0; PATH="$T/pathdir:$PATH" precord -o t.data true > out 2> err || rc=$?
assert_eq "$rc" 0 "true behind a directory of that name in PATH: exit status"

# -o naming the command itself: refused (exit 2) before it is renamed to .old
cp /bin/true mytrue
rc=0; precord -o mytrue ./mytrue > out 2> err || rc=$?
assert_eq "$rc" 2 "precord -o mytrue ./mytrue: exit status"
grep -q "^precord: -o mytrue is the command './mytrue' itself" err || { cat err; fail "-o mytrue ./mytrue: message"; }
[ -x mytrue ] && [ ! -e mytrue.old ] || fail "-o mytrue ./mytrue: the command was moved"
cp mytrue pathdir/
rc=0; (cd pathdir && PATH="$T/pathdir:$PATH" precord -o mytrue mytrue) > out 2> err || rc=$?
assert_eq "$rc" 2 "precord -o mytrue mytrue (in PATH): exit status"
[ -x pathdir/mytrue ] && [ ! -e pathdir/mytrue.old ] || fail "-o mytrue mytrue: the command was moved"
echo ok

# -C without -p records every process on those CPUs, as perf record -C does (it used to record
# the command alone there): a spinner pinned to CPU 0 is in a recording of sleep on CPU 0.
command -v taskset > /dev/null || skip "needs taskset"
taskset -c 0 "$W/spin_threads" 60 > /dev/null &   # 60 s at most, should the test fail before its kill
spin=$!
wait_cpu "$spin" 50
rc=0; precord -q -C 0 -o c0.data -- sleep 1 > out 2> err || rc=$?
kill "$spin"; wait "$spin" 2> /dev/null || true
assert_eq "$rc" 0 "precord -C 0 -- sleep 1: exit status"
perf report -i c0.data --stdio --sort comm 2> /dev/null | grep -q 'spin_threads' ||
	{ perf report -i c0.data --stdio --sort comm 2> /dev/null | head -20; fail "precord -C 0 did not record the other process on CPU 0"; }
echo "ok: -C records every process on its CPUs"
