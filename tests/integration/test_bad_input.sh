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
expect 127 "cannot run 'no-such-command-xyz'" -- no-such-command-xyz
expect 125 "cannot create" -- -o /nonexistent-dir/x.data true
[ ! -e perf.data ] || fail "a failed start left perf.data behind"
echo ok
