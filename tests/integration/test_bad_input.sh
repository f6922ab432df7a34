# Bad options get a clear message naming the thing, a non-zero exit, and nothing is started.
. "$(dirname "$0")/lib.sh"

expect() { # expect CODE PATTERN -- precord args...
	code=$1 pat=$2; shift 3
	set +e
	precord "$@" > o.txt 2> e.txt
	rc=$?
	set -e
	[ "$rc" = "$code" ] || { cat e.txt; fail "precord $*: exit $rc, expected $code"; }
	grep -q -- "$pat" e.txt || { cat e.txt; fail "precord $*: message lacks '$pat'"; }
	echo "ok: precord $* -> $rc: $(head -n 1 e.txt)"
}
expect 2 "nothing to record" --
expect 2 "invalid frequency 'abc'" -- -F abc true
expect 2 "invalid ring size '3'" -- -m 3 true
expect 2 "not a power of two" -- -m 3 true
expect 2 "invalid call graph mode 'lbr'" -- --call-graph lbr true
expect 2 "invalid stack size" -- --call-graph dwarf,99999999 true
expect 2 "invalid compression level '40'" -- -z40 true
expect 2 "unknown event 'cpu-clok'" -- -e cpu-clok true
expect 2 "did you mean cpu-clock" -- -e cpu-clok true
expect 2 "invalid affinity scope 'planet'" -- --affinity planet true
expect 2 "invalid pid list 'x1'" -- -p x1
expect 2 "must be below" -- --lossless --high-watermark 20 --low-watermark 30 true
expect 2 "cannot be used with -a" -- --lossless -a
expect 2 "invalid CPU list" -- -C 0-x true
expect 2 "does not exist" -- -C 1000 true
expect 2 "no process 999999" -- -p 999999
expect 2 "CPU 1024 given with -C does not exist (this machine has" -- -C 1024 true
expect 2 "CPU 5000 given with -C does not exist (this machine has" -- -C 5000 true
expect 2 "^precord: -C '' names no CPU: expected a list like 0-3,6" -- -C '' true
# events: an empty name is said as such (it was "bad modifier"); too many gives the count and
# the limit, exit 2 (it was 125 and a message repeating the whole list)
expect 2 "invalid -e '': event 1 of the list has no name" -- -e '' true
expect 2 "invalid -e ',': event 1 of the list has no name" -- -e , true
expect 2 "invalid -e 'cpu-clock,,page-faults': event 2 of the list has no name" -- -e cpu-clock,,page-faults true
many=$(awk 'BEGIN { for (i = 0; i < 2000; i++) printf "%scpu-clock", i ? "," : "" }')
expect 2 "^precord: too many events for -e: 2000 given, at most 16 at once" -- -e "$many" true
[ "$(wc -c < e.txt)" -lt 300 ] || fail "-e with 2000 events: a message of $(wc -c < e.txt) bytes"
# -m with a unit: the message names what was typed, not a page count never typed
expect 2 "^precord: -m 3K (1 page, 4 KiB per CPU) cannot hold one sample" -- -m 3K true
! grep -q -- "-m 1 " e.txt || fail "-m 3K: the message talks about -m 1"
expect 2 "invalid ring size '12K' for -m: 3 pages is not a power of two (try -m 8K or -m 16K)" -- -m 12K true
# -p: precord itself, and a thread rather than a process
set +e
sh -c 'exec precord -p $$ -o self.data' > /dev/null 2> e.txt
rc=$?
set -e
[ "$rc" = 2 ] || { cat e.txt; fail "precord -p of its own pid: exit $rc, expected 2"; }
grep -q "^precord: -p [0-9]* is precord itself" e.txt || { cat e.txt; fail "precord -p of its own pid: message"; }
SPIN_STOP="$T/stop" "$W/spin_threads" 600 > spin.out &
spin=$!
trap 'kill "$spin" 2> /dev/null || :; [ -n "${KEEP_T:-}" ] || rm -rf "$T"' EXIT INT TERM
has_threads() { [ "$(ls "/proc/$spin/task" 2> /dev/null | wc -l)" -ge 3 ]; }
wait_until "spin_threads' threads" has_threads
tid=$(ls "/proc/$spin/task" | grep -vx "$spin" | head -n 1)
expect 2 "^precord: -p $tid is a thread of process $spin, not a process.*(use -p $spin)" -- -p "$tid"
: > stop
wait $spin || true
expect 127 "cannot run 'no-such-command-xyz'" -- no-such-command-xyz
expect 2 "cannot write -o /nonexistent-dir/x.data: it would be in /nonexistent-dir, which does not exist" -- -o /nonexistent-dir/x.data true
# -o that is not a regular file on a disk: refused before the command starts, untouched, without
# blocking (a FIFO with no reader blocked open() forever; /proc and a pipe failed on a seek)
mkfifo fifo
set +e
timeout -k 5 60 precord -o fifo -- sh -c ': > ran' > /dev/null 2> e.txt
rc=$?
set -e
[ "$rc" = 2 ] || { cat e.txt; fail "precord -o fifo: exit $rc, expected 2 (124: it blocked)"; }
grep -q "cannot write -o fifo: it is a named pipe (FIFO), and precord writes perf.data with seeks" e.txt || { cat e.txt; fail "precord -o fifo: message"; }
[ -p fifo ] && [ ! -e fifo.old ] && [ ! -e ran ] || fail "precord -o fifo: the FIFO was touched or the command ran"
expect 2 "cannot write -o /proc/version: it is a file of the proc file system" -- -o /proc/version true
expect 2 "cannot write -o /dev/null: it is a character device" -- -o /dev/null true
expect 2 "cannot write -o $T: it is a directory" -- -o "$T" true
set +e
precord -o /dev/stdout true 2> e.txt | cat > /dev/null
set -e
grep -q "cannot write -o /dev/stdout: it is a named pipe (FIFO).*precord cannot write to a pipe" e.txt || { cat e.txt; fail "precord -o /dev/stdout into a pipe: message"; }
[ ! -e perf.data ] || fail "a failed start left perf.data behind"
expect 2 "cannot write -o -: precord writes perf.data with seeks" -- -o - true
expect 2 "--lossless cannot be used with -C: -C records every process on those CPUs" -- --lossless -C 0 true
ln -s /nonexistent-dir/x dangling
expect 2 "cannot write -o dangling: it is a symlink to /nonexistent-dir/x, whose directory does not exist" -- -o dangling true
# a symlink to a file not there yet, in a directory that is: open makes the file, as perf's
mkdir -p linked && ln -s linked/new.data to-new
precord -q -o to-new -- true || fail "-o a symlink to a new file in an existing directory: exit $?"
[ -s linked/new.data ] || fail "-o to-new did not write linked/new.data"
echo x > taken.data && mkdir taken.data.old
expect 2 "the file there would become taken.data.old, which is a directory" -- -o taken.data true
[ "$(cat taken.data)" = x ] || fail "-o taken.data: the file was touched"
printf '#!/no/such/interpreter\necho hi\n' > badshebang.sh && chmod +x badshebang.sh
echo before > bs.data
expect 127 "it is there, but the interpreter its #! line names, /no/such/interpreter, does not exist" -- -o bs.data ./badshebang.sh
# the command never ran: the file that was there stays (before: an empty recording took its place)
[ "$(cat bs.data)" = before ] && [ ! -e bs.data.old ] || { ls -la bs.data*; fail "a command that did not run replaced -o's file"; }
[ ! -e ./- ] || fail "precord -o - made a file named '-'"
# A start that fails after the file was made (the description of the running processes
# passes --max-size): the file that was there stays as it was, and no .old appears.
echo good > keep.data
expect 125 "the description of the running processes alone passes the size limit" -- --max-size 4K -a -o keep.data -- true
[ "$(cat keep.data)" = good ] && [ ! -e keep.data.old ] || { ls -la keep.data*; fail "a failed start replaced the file that was there"; }
echo ok
