# precord run by a user without privileges, as perf record is: at perf_event_paranoid 2 it may
# not record the kernel and sees kernel addresses as 0 in /proc/kallsyms. precord then records
# user space only (saying so), without a kernel map, where it used to exit 125 ("no permission
# to open event", then "cannot describe the running processes") after moving the user's
# previous recording to .old and leaving a damaged file in its place.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root to run as another user"
id nobody > /dev/null 2>&1 && command -v setpriv > /dev/null || skip "needs a nobody user and setpriv"
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
[ "$paranoid" -le 2 ] || skip "perf_event_paranoid is $paranoid: a user records nothing, as with perf"
user_bins "$W/hotlib" "$W/libhot.so"
mkdir u && chown nobody u
as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
echo previous > u/r.data && chown nobody u/r.data

rc=0; (cd u && as_nobody "$UB/precord" -o r.data -- "$UB/hotlib") > out 2> err || rc=$?
cat err
assert_eq "$rc" 0 "precord as nobody: exit status"
[ "$paranoid" -le 1 ] || grep -q "this user may not record the kernel (kernel.perf_event_paranoid is $paranoid): recording user space only" err ||
	fail "no word of recording user space only"
assert_eq "$(cat u/r.data.old)" previous "the previous recording, moved to r.data.old"
perf report -f -i u/r.data --stats > stats 2> stats.err || { cat stats.err; fail "perf report --stats on the user's recording"; }
n=$(awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }' stats)
assert_le 100 "${n:-0}" "samples in the user's recording"
# user space only: no sample in the kernel
perf script -f -i u/r.data -F ip 2> /dev/null > ips
! grep -qiE '^[[:space:]]*ffff' ips || fail "kernel samples in a recording that could not have them"
"$TOP/preport" -i u/r.data --stdio --no-children > rep 2> rep.err || { cat rep.err; fail "preport on the user's recording"; }
grep -q 'hotlib' rep || { head -20 rep; fail "no hotlib in the report"; }
echo "ok: nobody recorded $n samples of user space"
