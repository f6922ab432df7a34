# preport's input: a FIFO is read once a writer comes (as perf reads one), -i - reads a file
# redirected to standard input or piped there (a file-mode perf.data through cat reads as the
# file does), an empty pipe is refused with the reason, and in an -a recording the processes
# started during the recording are named under --sort pid as perf names them. (Pipe-mode
# streams: test_preport_pipe.)
. "$(dirname "$0")/lib.sh"

"$W/spin_threads" 0.3 > /dev/null 2>&1 || true
precord -q -F 1000 -o p.data -- "$W/spin_threads" 0.3 > /dev/null 2> rec.err || { cat rec.err; fail "precord exit $?"; }
preport -i p.data > want 2>/dev/null || fail "preport -i p.data exit $?"

# A FIFO: preport waits for its writer, then reads what it wrote.
mkfifo fifo
preport -i fifo > got 2> err &
rpid=$!
cat p.data > fifo
wait $rpid || { cat err; fail "preport -i FIFO exit $?"; }
cmp -s want got || fail "preport -i FIFO differs from -i file"

# Standard input: a redirected file and a pipe read like -i FILE; an empty pipe is refused.
preport -i - < p.data > got 2> err || { cat err; fail "preport -i - < file exit $?"; }
cmp -s want got || fail "preport -i - < file differs from -i file"
cat p.data | preport -i - > got 2> err || { cat err; fail "cat file | preport -i - exit $?"; }
cmp -s want got || fail "cat file | preport -i - differs from -i file"
rc=0; : | preport -i - > out 2> err || rc=$?
[ "$rc" -eq 3 ] || fail "preport -i - from an empty pipe: exit $rc, not 3"
grep -q "cannot read -: empty input (nothing was written to the pipe)" err || { cat err; fail "empty pipe: no reason"; }
rc=0; preport -i /dev/null > out 2> err || rc=$?
[ "$rc" -ne 0 ] || fail "preport -i /dev/null exit 0"
grep -q "not a regular file or a pipe" err || { cat err; fail "/dev/null: no reason"; }

# -a: short-lived processes started during the recording (each is sampled on its way out,
# after its EXIT record) keep their names.
# No call graphs: perf report of a DWARF -a recording of a busy machine takes minutes.
precord -q -F 1000 -a --call-graph none -o sys.data -- sh -c "for i in 1 2 3 4; do '$W/spin_threads' 0.2; done" \
	> /dev/null 2> rec.err || { cat rec.err; fail "precord -a exit $?"; }
preport -i sys.data --sort pid -g none > pids.txt 2> err || { cat err; fail "preport --sort pid exit $?"; }
perf report -i sys.data --stdio --sort pid -g none > perf-pids.txt 2>/dev/null || fail "perf report --sort pid"
n=$(grep -c ':spin_threads' perf-pids.txt || true)
assert_ge "$n" 4 "spin_threads processes named by perf"
grep -E '^ +[0-9.]+%' pids.txt | grep -q '::unknown' && { grep ':unknown' pids.txt; \
	grep -E '^ +[0-9.]+%' perf-pids.txt | grep -v ':unknown' | head -20; fail "preport shows PID::unknown"; }
# every process perf names spin_threads, preport names too: spin_threads, or sh when its only
# samples came before its exec (perf shows a thread's last name; preport the last one sampled)
for pid in $(grep -oE '[0-9]+:spin_threads' perf-pids.txt | cut -d: -f1 | sort -u); do
	grep -qE "^ +[0-9.]+% +([0-9.]+% +)?$pid:(spin_threads|sh)( |\$)" pids.txt ||
		{ grep -E " $pid:" pids.txt perf-pids.txt; fail "process $pid: perf names it spin_threads, preport does not"; }
done
echo ok
