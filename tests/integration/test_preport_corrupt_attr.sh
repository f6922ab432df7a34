# A damaged attr never drops samples silently: with attr 0's sample_type set to 2^64-1, or one
# byte of its sample_regs_user changed, in a perf -z DWARF file, preport names on stderr how many
# samples of which event (attr) cannot be decoded and why, and exits 1 (partial, as for a damaged
# data section); --force reports the rest and exits 0, still saying so.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
MIXED_CPU=1 perf record -q -z -F 2000 -e cpu-clock --call-graph dwarf -o good.data "$W/mixed" 0.5 > /dev/null 2>&1 ||
	fail "perf record failed"
preport -i good.data > /dev/null 2> err || { cat err; fail "preport on the undamaged file exit $?"; }
total=$(preport -i good.data --stats | awk '$1 == "SAMPLE" { print $3; exit }')
assert_ge "$total" 20 "samples in the recording"
attrs=$(od -An -t u8 -j 24 -N 8 good.data | tr -d ' ')

# poke FILE OFFSET OCTAL-BYTES: overwrite bytes in place.
poke() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2> /dev/null; }

# 1. sample_type (attr + 24) = 2^64-1
cp good.data st.data
poke st.data $((attrs + 24)) '\377\377\377\377\377\377\377\377'
rc=0; preport -i st.data > out 2> err || rc=$?
cat err
assert_eq "$rc" 1 "sample_type 2^64-1: exit status"
grep -q "^preport: $total of $total samples of event 'cpu-clock' (attr 0) cannot be decoded: the attr's sample_type has fields no kernel defines: the attr is damaged (sample_type 0xffffffffffffffff" err ||
	fail "sample_type 2^64-1: no named reason"
rc=0; preport --force -i st.data > out 2> err || rc=$?
assert_eq "$rc" 0 "sample_type 2^64-1 --force: exit status"
grep -q "cannot be decoded.*reported the others (--force)" err || fail "--force: the loss is not said"

# 2. the low byte of sample_regs_user (attr + 80) changed: fewer registers than each sample has
cp good.data regs.data
poke regs.data $((attrs + 80)) '\000'
rc=0; preport -i regs.data > out 2> err || rc=$?
cat err
assert_eq "$rc" 1 "sample_regs_user changed: exit status"
grep -q "^preport: $total of $total samples of event 'cpu-clock' (attr 0) cannot be decoded: the records .*(sample_type 0x[0-9a-f]*, sample_regs_user 0x[0-9a-f]*00)" err ||
	fail "sample_regs_user changed: no named reason"
echo ok
