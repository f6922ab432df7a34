# precord's usage errors: -p of a process that does not exist is bad usage (exit 2, named), and
# --readers above the number of CPUs recorded says what it uses instead.
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
echo ok
