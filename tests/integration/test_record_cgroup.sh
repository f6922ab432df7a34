# --all-cgroups: every sample carries its task's cgroup, and the file names the cgroups, so that
# perf report --sort cgroup attributes a program to the cgroup it ran in: one made before the
# recording (precord synthesizes its PERF_RECORD_CGROUP by walking the cgroup2 tree) and one the
# command makes while it is recorded (the kernel writes that record).
. "$(dirname "$0")/lib.sh"

root=$(sed -n 's/^[^ ]* [^ ]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -n 1)
[ -n "$root" ] && [ -d "$root" ] || skip "no cgroup2 mount on this machine"
base="precord-test-$$.slice"
old="$base/before-$$.service" new="$base/during-$$.service"
mkdir -p "$root/$old" || skip "cannot make a cgroup under $root"
cleanup_cg() {
	for c in "$root/$new" "$root/$old" "$root/$base"; do
		[ -d "$c" ] || continue
		# move anything left behind back to the root before removing the cgroup
		while read -r p; do echo "$p" > "$root/cgroup.procs" 2> /dev/null || true; done < "$c/cgroup.procs"
		rmdir "$c" 2> /dev/null || true
	done
	rm -rf "$T"
}
trap cleanup_cg EXIT INT TERM

# each shell moves itself into its cgroup, then becomes the workload (spin_threads SECONDS THREADS)
cat > in-cgroup.sh <<'SH'
# in-cgroup.sh DIR CMD...: make DIR if needed, move this shell into it, become CMD
mkdir -p "$1" && echo $$ > "$1/cgroup.procs" && shift && exec "$@"
SH
precord -q --all-cgroups -e cpu-clock -o cg.data -- sh -c "
	sh in-cgroup.sh '$root/$old' '$W/spin_threads' 0.5 1 > /dev/null &
	sh in-cgroup.sh '$root/$new' '$W/spin_threads' 0.5 1 > /dev/null &
	wait" 2> rec.err || { cat rec.err; fail "precord --all-cgroups exit $?"; }
perf_clean cg.data
ncg=$(stat_count cg.data CGROUP)
echo "CGROUP records: $ncg"
assert_ge "$ncg" 3 "CGROUP records (the root, the slice, two services)"
perf report -i cg.data --stdio --no-children --sort cgroup,comm -g none -q 2>/dev/null > by-cg.txt
cat by-cg.txt
for c in "/$old" "/$new"; do
	pct=$(awk -v c="$c" '$2 == c && $3 == "spin_threads" { gsub("%", "", $1); s += $1 } END { print s + 0 }' by-cg.txt)
	echo "$c: $pct% (spin_threads)"
	awk -v p="$pct" 'BEGIN { exit !(p >= 10) }' || fail "perf report --sort cgroup gives $c only $pct% of the samples"
done
# the samples themselves: every sample of spin_threads is in one of the two cgroups
other=$(awk -v a="/$old" -v b="/$new" '$3 == "spin_threads" && $2 != a && $2 != b { gsub("%", "", $1); s += $1 } END { print s + 0 }' by-cg.txt)
awk -v p="$other" 'BEGIN { exit !(p < 1) }' || fail "spin_threads samples outside its cgroups: $other%"

# preport: --sort cgroup,comm as perf (same rows, same percentages), --sort unit by service,
# --cgroup keeps one service (by unit name or by path)
rows preport -i cg.data --no-children --sort cgroup,comm -g none > pre-cg.txt
grep '%' by-cg.txt | awk '{ print $1, $2, $3 }' | sort > a.txt
awk '{ print $1, $2, $3 }' pre-cg.txt | sort > b.txt
diff a.txt b.txt || fail "preport --sort cgroup,comm differs from perf report --sort cgroup,comm"
rows preport -i cg.data --no-children --sort unit -g none > unit.txt
cat unit.txt
for u in "before-$$.service" "during-$$.service"; do
	want=$(awk -v c="/$base/$u" '$2 == c { gsub("%", "", $1); s += $1 } END { printf "%.2f", s }' by-cg.txt)
	got=$(awk -v u="$u" '$2 == u { gsub("%", "", $1); print $1 }' unit.txt)
	echo "unit $u: $got% (perf's cgroup: $want%)"
	close_to "${got:-0}" "$want" 0.02 || fail "preport --sort unit gives $u ${got:-0}%, perf's cgroup $want%"
done
for sel in "during-$$.service" "/$new"; do
	rows preport -i cg.data --no-children --sort cgroup,comm -g none --cgroup "$sel" > sel.txt
	[ "$(awk '{ print $2 }' sel.txt | sort -u)" = "/$new" ] || { cat sel.txt; fail "--cgroup $sel shows other cgroups"; }
done
echo ok
