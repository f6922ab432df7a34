#!/bin/sh
# Kernel symbols sharing an address (__pi___x86_indirect_thunk_rax, __x86_indirect_thunk_array
# and __x86_indirect_thunk_rax; __ia32_sys_* and __x64_sys_*): preport names each kernel row of a
# syscall-heavy recording as perf report does, with the same share. perf extends the unsized
# kallsyms symbols before it drops aliases, so the last of a group in kallsyms wins.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -r /proc/kallsyms ] && [ "$(sed -n '1s/ .*//p' /proc/kallsyms)" != 0000000000000000 ] ||
	skip "kallsyms addresses are hidden"

# "NAME PERCENT" of the kernel rows, sorted by name
krows() { grep -E '^ +[0-9.]+% +\[k\] ' | awk '{ print $3, $1 + 0 }' | LC_ALL=C sort; }
# the names of kernel text symbols that share their address with another
awk '$2 ~ /^[Tt]$/ { n[$1]++ } END { for (a in n) if (n[a] > 1) print a }' /proc/kallsyms > aliased.addr
awk 'NR == FNR { a[$1] = 1; next } $1 in a { print $3 }' aliased.addr /proc/kallsyms | LC_ALL=C sort -u > aliased.names
# The recording must hit an address with several names, or it proves nothing: the syscall entry
# points get a sample or two of dd's 2,000-odd, and not always, so a recording that hit none is
# made again with twice the work (at most 5 times), each compared with perf's.
count=200000 try=1
while :; do
	perf record -q -e cpu-clock -o dd.data -- dd if=/dev/zero of=/dev/null count=$count > /dev/null 2>&1 ||
		fail "perf record dd failed"
	perf report -i dd.data --stdio --no-children --sort sym -g none 2> /dev/null | krows > perf.k
	preport -i dd.data --no-children --sort sym -g none 2> /dev/null | krows > preport.k
	[ -s perf.k ] || fail "no kernel rows in perf report's output"
	cmp -s perf.k preport.k || { diff perf.k preport.k; fail "kernel rows differ from perf report's (dd count=$count)"; }
	hits=$(awk 'NR == FNR { a[$1] = 1; next } $1 in a' aliased.names perf.k | wc -l)
	[ "$hits" -eq 0 ] && [ $try -lt 5 ] || break
	echo "dd count=$count: no row at an aliased address; again with twice the work"
	count=$((count * 2)) try=$((try + 1))
done
assert_ge "$hits" 1 "kernel rows at addresses with several names, in $try recordings"
echo "ok: $(wc -l < perf.k) kernel rows agree, $hits of them at aliased addresses"
