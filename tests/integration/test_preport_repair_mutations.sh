# preport --repair over a mutation set: damaged copies of real perf and precord recordings (a
# byte changed, a word set to all ones or zeros in the header and attrs, the file cut, two chunks
# of the data swapped, feature bits flipped), each repaired; every repaired file must read in
# perf report --stdio and perf script with exit 0 and nothing on stderr but perf's warnings (lost
# events, no kernel map), and in preport with exit 0. REPAIR_MUTATIONS (default 30; the larger runs: 300 and more) sets how many files;
# REPAIR_SEED the seed.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
N=${REPAIR_MUTATIONS:-30}
SEED=${REPAIR_SEED:-17}

# Sources: perf (DWARF; -z; -a) and precord (compressed; not).
perf record -q -F 500 -e cpu-clock --call-graph dwarf -o s1.data "$W/mixed" 0.3 > /dev/null 2>&1 || fail "perf record"
perf record -q -z -F 500 -e cpu-clock --call-graph dwarf -o s2.data "$W/mixed" 0.3 > /dev/null 2>&1 || fail "perf record -z"
perf record -q -a -F 200 -e cpu-clock -g -o s3.data -- "$W/mixed" 0.3 > /dev/null 2>&1 || fail "perf record -a"
precord -q -F 500 -o s4.data -- "$W/mixed" 0.3 > /dev/null 2>&1 || fail "precord"
precord -q -F 500 --no-compress -o s5.data -- "$W/mixed" 0.3 > /dev/null 2>&1 || fail "precord --no-compress"
for s in s1 s2 s3 s4 s5; do
	preport -i $s.data --repair $s.fixed > /dev/null 2>&1 || fail "repair of the undamaged $s.data"
done

# One line per mutation: SOURCE KIND A B C (offsets and lengths; see apply below).
awk -v n="$N" -v seed="$SEED" -v s1="$(stat -c %s s1.data)" -v s2="$(stat -c %s s2.data)" \
    -v s3="$(stat -c %s s3.data)" -v s4="$(stat -c %s s4.data)" -v s5="$(stat -c %s s5.data)" 'BEGIN {
	srand(seed); size["s1"] = s1; size["s2"] = s2; size["s3"] = s3; size["s4"] = s4; size["s5"] = s5
	for (i = 0; i < n; i++) {
		src = "s" (i % 5 + 1); sz = size[src]; k = int(rand() * 6)
		if (k == 0)      print src, "byte", int(rand() * sz), int(rand() * 256), 0
		else if (k == 1) print src, "word", 104 + int(rand() * 400 / 8) * 8, int(rand() * 2), 0
		else if (k == 2) print src, "cut", 200 + int(rand() * (sz - 200)), 0, 0
		else if (k == 3) { len = 64 + int(rand() * 4000); a = 300 + int(rand() * (sz / 2)); b = a + len + int(rand() * (sz / 2 - len));
				   if (b + len > sz) b = sz - len; print src, "swap", a, b, len }
		else if (k == 4) print src, "feat", 72 + int(rand() * 32), int(rand() * 8), 0
		else             print src, "byte", 300 + int(rand() * 2000), int(rand() * 256), 0
	}
}' > muts.txt

# apply SRC KIND A B C OUT
apply() {
	cp "$1.data" "$6"
	case $2 in
	byte) printf "\\$(printf %o "$4")" | dd of="$6" bs=1 seek="$3" conv=notrunc 2> /dev/null ;;
	word) if [ "$4" = 1 ]; then v='\377\377\377\377\377\377\377\377'; else v='\0\0\0\0\0\0\0\0'; fi
	      printf "$v" | dd of="$6" bs=1 seek="$3" conv=notrunc 2> /dev/null ;;
	cut)  truncate -s "$3" "$6" ;;
	swap) dd if="$1.data" of=a.tmp bs=4096 iflag=skip_bytes,count_bytes skip="$3" count="$5" 2> /dev/null
	      dd if="$1.data" of=b.tmp bs=4096 iflag=skip_bytes,count_bytes skip="$4" count="$5" 2> /dev/null
	      dd if=b.tmp of="$6" bs=4096 oflag=seek_bytes seek="$3" conv=notrunc 2> /dev/null
	      dd if=a.tmp of="$6" bs=4096 oflag=seek_bytes seek="$4" conv=notrunc 2> /dev/null ;;
	feat) old=$(od -An -t u1 -j "$3" -N 1 "$6" | tr -d ' ')
	      printf "\\$(printf %o $(( old ^ (1 << $4) )))" | dd of="$6" bs=1 seek="$3" conv=notrunc 2> /dev/null ;;
	esac
}

# perf_ok FILE WHAT: perf report and perf script read FILE with exit 0 and nothing on stderr but
# its warnings about lost events.
perf_ok() {
	for cmd in "report --stdio" "script"; do
		# shellcheck disable=SC2086
		perf $cmd -i "$1" > /dev/null 2> perr.txt || { cat perr.txt >&2; fail "$2: perf $cmd exit $?"; }
		# perf's warnings that are no error: lost events, and no kernel map (the repair
		# dropped a damaged one)
		if grep -vE '^$|^Warning:$|^Processed [0-9]+ (events|samples) and lost [0-9.]+%? ?(chunks)?!?$|^Check IO/CPU overload!$|^Kernel address maps \(/proc/\{kallsyms,modules\}\) were restricted\.$|^Check /proc/sys/kernel/kptr_restrict before running .perf record.\.$|^As no suitable kallsyms nor vmlinux was found, kernel samples$|^can.t be resolved\.$|^Samples in kernel modules can.t be resolved as well\.$|^If some relocation was applied \(e\.g\. kexec\) symbols may be misresolved\.$' perr.txt > bad.txt; then
			cat perr.txt >&2
			fail "$2: perf $cmd wrote to stderr"
		fi
	done
}

i=0 repaired=0 refused=0
while read -r src kind a b c; do
	i=$((i + 1))
	what="mutation $i ($src $kind $a $b $c)"
	apply "$src" "$kind" "$a" "$b" "$c" m.data
	rm -f fixed.data
	rc=0; preport -q -i m.data --repair fixed.data > /dev/null 2> err.txt || rc=$?
	[ "$rc" -lt 128 ] || fail "$what: preport --repair killed by signal $((rc - 128))"
	case $rc in
	0)	[ -s fixed.data ] || fail "$what: exit 0 without a file"
		perf_ok fixed.data "$what"
		preport -i fixed.data > /dev/null 2> err.txt || { cat err.txt >&2; fail "$what: preport on the repaired file exit $?"; }
		repaired=$((repaired + 1)) ;;
	1|3)	[ ! -e fixed.data ] || fail "$what: exit $rc but $T/fixed.data written"
		grep -q "^preport: " err.txt || fail "$what: exit $rc without a reason"
		refused=$((refused + 1)) ;;
	*)	cat err.txt >&2; fail "$what: exit $rc" ;;
	esac
done < muts.txt
echo "ok: $i damaged files, $repaired repaired (perf reads each cleanly), $refused refused with a reason"
assert_ge "$repaired" $((i / 2)) "files repaired"
