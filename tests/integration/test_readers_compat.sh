# Other perf.data readers read precord's files as they read perf's own recording of the same
# program (build/workloads/mixed, DWARF stacks):
# - hotspot's parser (Debian's hotspot, built without zstd) reads a --no-compress file: samples,
#   and the program's own functions by name in the stream it writes for hotspot; a default
#   (compressed) file gets the verdict perf's own -z file gets, its COMPRESSED feature accepted
#   ("zstd decompression support not available"), never "unsupported compression version".
# - perf buildid-list lists every entry perf's file lists, with the same id, [kernel.kallsyms] and
#   [vdso] among them; after perf inject --buildid-all both files list the same entries.
#   (perf 6.1's inject cannot add build ids to a compressed file, perf's own included: the
#   files are --no-compress.)
. "$(dirname "$0")/lib.sh"

PP=$(ls /usr/lib/*/libexec/hotspot-perfparser 2> /dev/null | head -n 1)
[ -n "$PP" ] || fail "hotspot-perfparser missing: install Debian's hotspot (make deps)"
[ -x "$W/mixed" ] || fail "$W/mixed missing (make test-bins)"

perf record -q -e cpu-clock --call-graph dwarf -o perf.data -- "$W/mixed" 1 > /dev/null 2>&1 ||
	fail "perf record exit $?"
perf record -q -z -e cpu-clock --call-graph dwarf -o perf-z.data -- "$W/mixed" 1 > /dev/null 2>&1 ||
	fail "perf record -z exit $?"
MIXED_CPU=1 precord -q --no-compress -o plain.data -- "$W/mixed" 1 > /dev/null || fail "precord --no-compress exit $?"
precord -q -o z.data -- "$W/mixed" 1 > /dev/null || fail "precord exit $?"

# hotspot's parser on the uncompressed file: samples, and symbols resolved by name.
"$PP" --input plain.data --print-stats > pp-stats.out 2>&1 || { cat pp-stats.out; fail "perfparser --print-stats exit $?"; }
n=$(sed -n 's/^samples: \([0-9]*\)$/\1/p' pp-stats.out)
echo "perfparser on plain.data: ${n:-no} samples"
assert_ge "${n:-0}" 100 "perfparser samples in plain.data"
"$PP" --input plain.data --output plain.stream > pp.out 2>&1 || { cat pp.out; fail "perfparser exit $?"; }
for f in main_loop_work recurse; do
	grep -aq "$f" plain.stream || fail "perfparser resolved no symbol $f in plain.data"
done
! grep -q "unsupported\|unhandled event" pp-stats.out pp.out || { cat pp-stats.out; fail "perfparser complains about plain.data"; }

# The compressed files: the same verdict for perf's and ours.
verdict() { "$PP" --input "$1" --print-stats 2>&1 | grep -E "compression|zstd" | sort -u; }
verdict perf-z.data > perf-z.verdict
verdict z.data > z.verdict
echo "perfparser on perf -z: $(cat perf-z.verdict); on precord: $(cat z.verdict)"
grep -q "zstd decompression support not available" z.verdict || fail "perfparser did not accept precord's COMPRESSED feature"
! grep -q "unsupported compression version" z.verdict || fail "perfparser: $(cat z.verdict)"
cmp -s perf-z.verdict z.verdict || fail "perfparser says of perf -z: '$(cat perf-z.verdict)', of precord: '$(cat z.verdict)'"

# Build ids.
perf buildid-list -i perf.data | sort -k 2 > perf.ids
perf buildid-list -i plain.data | sort -k 2 > ours.ids
echo "perf buildid-list, perf's file:"; cat perf.ids
echo "precord's file:"; cat ours.ids
for name in '[kernel.kallsyms]' '[vdso]'; do
	awk -v n="$name" '$2 == n && length($1) >= 40 { f = 1 } END { exit !f }' ours.ids ||
		fail "precord's file has no build id for $name"
done
# perf lists the DSOs its samples hit; precord every one mapped: perf's are a subset.
missing=$(grep -vxF -f ours.ids perf.ids || true)
[ -z "$missing" ] || fail "entries of perf's file missing from precord's: $missing"
perf inject --buildid-all -i perf.data -o perf-inj.data 2> inj.err || { cat inj.err; fail "perf inject on perf.data exit $?"; }
perf inject --buildid-all -i plain.data -o plain-inj.data 2> inj.err || { cat inj.err; fail "perf inject on plain.data exit $?"; }
perf buildid-list -i perf-inj.data | sort -k 2 > perf-inj.ids
perf buildid-list -i plain-inj.data | sort -k 2 > ours-inj.ids
[ -s perf-inj.ids ] || fail "perf inject --buildid-all: perf's file lists nothing"
diff perf-inj.ids ours-inj.ids || fail "after perf inject --buildid-all, precord's file lists other entries than perf's"
echo "after perf inject --buildid-all: the same $(wc -l < ours-inj.ids) entries"

# precord's own sections live in a trailer after perf's features (--lossless's pause statistics,
# every file's ring-order claim): perf inject copies such a file, where feature bits above perf's
# made it crash (SIGSEGV), and perf reads the copy; preport still finds them.
precord -q --no-compress --lossless -o ll.data -- "$W/mixed" 1 > /dev/null 2>&1 ||
	fail "precord --lossless --no-compress exit $?"
tail -c 8 ll.data | grep -q PRECTRL1 || fail "precord's file ends without its trailer"
preport --stats -i ll.data | grep -q 'pauses:' || fail "preport --stats finds no pause statistics"
perf inject -i ll.data -o ll-inj.data 2> inj.err || fail "perf inject on a --lossless file exit $?: $(cat inj.err)"
n=$(stat_count ll.data SAMPLE) ni=$(stat_count ll-inj.data SAMPLE)
[ "$n" -gt 0 ] && [ "$ni" = "$n" ] || fail "perf inject's copy has $ni samples, the file $n"
echo ok
