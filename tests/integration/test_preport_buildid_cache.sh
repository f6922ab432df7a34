#!/bin/sh
# perf's build-id cache: perf record copies each file it saw into ~/.debug/.build-id/xx/rest/elf.
# A program stripped after an unstripped recording keeps its build id; perf report then names
# its functions from that copy (dso__load's BUILD_ID_CACHE before the file on disk), and so must
# preport. Only the user's own ~/.debug: a $HOME of someone else's is not followed.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
command -v cc > /dev/null 2>&1 && command -v strip > /dev/null 2>&1 || skip "cc or strip is missing"
export HOME="$T/home"
mkdir -p "$HOME"

cat > prog.c << 'SRC'
static __attribute__((noinline)) long spin_static(long n)
{
	long a = 0;
	for (long i = 0; i < n; i++)
		a += i * 3 ^ (a >> 5);
	return a;
}
volatile long sink;
int main(void) { sink = spin_static(600000000L); return 0; }
SRC
cc -O1 -Wl,--build-id -o prog prog.c || fail "cc failed"
perf record -q -e cpu-clock -o before.data ./prog > /dev/null 2>&1 || fail "perf record failed"
ls "$HOME"/.debug/.build-id/*/*/elf > /dev/null 2>&1 || fail "perf record put nothing in $HOME/.debug"
strip -o prog.stripped prog && mv prog.stripped prog # a new file: perf's cache entry is a hard link
perf record -q -e cpu-clock -o after.data ./prog > /dev/null 2>&1 || fail "perf record (stripped) failed"
sym_pct after.data spin_static > perf.pct
close_to "$(cat perf.pct)" 90 10 || fail "perf report names spin_static in $(cat perf.pct)% (expected most)"
VIEWS="--no-children -g none --sort sym|--no-children -g none" MIN_ROWS=1 compare_reports "stripped" after.data

# the cache of a $HOME that is not the user's own is not read: another owner's directory
mkdir -p "$T/other"
cp -a "$HOME/.debug" "$T/other/"
chown -R 65534 "$T/other"
HOME="$T/other" preport -i after.data --no-children -g none --sort sym 2> /dev/null > other.out
! grep -q 'spin_static' other.out || fail "preport read the build-id cache of a \$HOME the user does not own"
echo ok
