#!/bin/sh
# An address no symbol holds is shown as perf shows it: for a user dso the map-relative
# address, ip - map start + pgoff (the file offset), not the ELF virtual address: a stripped
# -no-pie binary (vaddr 0x401xxx, offset 0x1xxx), a stripped PIE binary and a stripped shared
# library, each with its hot loop in a static function (no .dynsym entry covers it).
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
command -v cc > /dev/null 2>&1 && command -v strip > /dev/null 2>&1 || skip "cc or strip is missing"

cat > lib.c << 'SRC'
static __attribute__((noinline)) long lib_spin(long n)
{
	long a = 0;
	for (long i = 0; i < n; i++)
		a += i ^ (a >> 3);
	return a;
}
long lib_entry(long n) { return lib_spin(n); }
SRC
cat > prog.c << 'SRC'
long lib_entry(long n);
static __attribute__((noinline)) long main_spin(long n)
{
	long a = 0;
	for (long i = 0; i < n; i++)
		a += i * 3 ^ (a >> 5);
	return a;
}
int main(void) { return (int)((main_spin(400000000L) + lib_entry(400000000L)) & 1); }
SRC
cc -O1 -fPIC -shared -o libt.so lib.c || fail "cc lib.c failed"
cc -O1 -no-pie -o nopie prog.c -L. -lt -Wl,-rpath,"$T" || fail "cc -no-pie failed"
cc -O1 -pie -fPIE -o pie prog.c -L. -lt -Wl,-rpath,"$T" || fail "cc -pie failed"
strip libt.so nopie pie

for prog in nopie pie; do
	perf record -q -e cpu-clock -o $prog.data ./$prog > /dev/null 2>&1 || fail "perf record $prog failed"
	VIEWS="--no-children -g none --sort dso,sym" compare_reports "$prog" $prog.data
	# the rows of the program and of the library are addresses, and the same as perf's
	for dso in $prog libt.so; do
		perf report -i $prog.data --stdio --no-children -g none --sort dso,sym 2> /dev/null |
			awk -v d=$dso '$2 == d && $4 ~ /^0x/ { print $4 }' | head -n 5 > perf.addr
		preport -i $prog.data --no-children -g none --sort dso,sym 2> /dev/null |
			awk -v d=$dso '$2 == d && $4 ~ /^0x/ { print $4 }' | head -n 5 > preport.addr
		[ -s perf.addr ] || fail "$prog: no unresolved rows of $dso in perf report"
		cmp -s perf.addr preport.addr || { diff perf.addr preport.addr; fail "$prog: addresses in $dso differ from perf's"; }
		echo "ok: $prog: $dso's unresolved rows, $(head -n 1 preport.addr)..., as perf shows them"
	done
done
