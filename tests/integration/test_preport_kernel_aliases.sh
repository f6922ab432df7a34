#!/bin/sh
# Kernel symbols sharing an address (__pi___x86_indirect_thunk_rax, __x86_indirect_thunk_array
# and __x86_indirect_thunk_rax; __ia32_sys_* and __x64_sys_*): preport names each kernel row of a
# syscall-heavy recording as perf report does, with the same share. perf extends the unsized
# kallsyms symbols before it drops aliases, so the last of a group in kallsyms wins.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -r /proc/kallsyms ] && [ "$(sed -n '1s/ .*//p' /proc/kallsyms)" != 0000000000000000 ] ||
	skip "kallsyms addresses are hidden"

perf record -q -e cpu-clock -o dd.data -- dd if=/dev/zero of=/dev/null count=200000 > /dev/null 2>&1 ||
	fail "perf record dd failed"
# "NAME PERCENT" of the kernel rows, sorted by name
krows() { grep -E '^ +[0-9.]+% +\[k\] ' | awk '{ print $3, $1 + 0 }' | LC_ALL=C sort; }
perf report -i dd.data --stdio --no-children --sort sym -g none 2> /dev/null | krows > perf.k
preport -i dd.data --no-children --sort sym -g none 2> /dev/null | krows > preport.k
[ -s perf.k ] || fail "no kernel rows in perf report's output"
cmp -s perf.k preport.k || { diff perf.k preport.k; fail "kernel rows differ from perf report's"; }
# the recording must have hit an address with several names, or it proves nothing
awk '$2 ~ /^[Tt]$/ { n[$1]++ } END { for (a in n) if (n[a] > 1) print a }' /proc/kallsyms > aliased.addr
awk 'NR == FNR { a[$1] = 1; next } $1 in a { print $3 }' aliased.addr /proc/kallsyms | LC_ALL=C sort -u > aliased.names
hits=$(awk 'NR == FNR { a[$1] = 1; next } $1 in a' aliased.names perf.k | wc -l)
assert_ge "$hits" 1 "kernel rows at addresses with several names"
echo "ok: $(wc -l < perf.k) kernel rows agree, $hits of them at aliased addresses"
