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

# precord fills the same cache, as perf record does: a fresh $HOME, an unstripped program
# recorded, then stripped and recorded again; perf report and preport both name its functions
# from the copy precord left. With -N, nothing is added.
export HOME="$T/home2"
mkdir -p "$HOME"
cc -O1 -Wl,--build-id -o prog2 prog.c || fail "cc failed"
precord -q -N -o n.data -- ./prog2 > /dev/null 2>&1 || fail "precord -N failed"
[ ! -e "$HOME/.debug" ] || fail "precord -N added to the build-id cache"
precord -q -o before2.data -- ./prog2 > /dev/null 2>&1 || fail "precord (unstripped) failed"
id=$(perf buildid-list -i before2.data 2> /dev/null | awk -v p="$PWD/prog2" '$2 == p { print $1 }')
[ -n "$id" ] || fail "no build id of prog2 in precord's file"
short=$(echo "$id" | cut -c3-)
cmp -s "$HOME/.debug/.build-id/$(echo "$id" | cut -c1-2)/$short/elf" prog2 ||
	{ find "$HOME/.debug" | head -20; fail "precord put no copy of prog2 under its build id in $HOME/.debug"; }
strip -o prog2.stripped prog2 && mv prog2.stripped prog2
precord -q -o after2.data -- ./prog2 > /dev/null 2>&1 || fail "precord (stripped) failed"
sym_pct after2.data spin_static > perf2.pct
close_to "$(cat perf2.pct)" 90 10 || fail "perf report names spin_static in $(cat perf2.pct)% of precord's recording of the stripped program"
VIEWS="--no-children -g none --sort sym|--no-children -g none" MIN_ROWS=1 compare_reports "stripped, precord" after2.data
echo ok
