#!/bin/sh
# Mutation sweep: real recordings (perf's and precord's, plain and zstd-compressed, fp and dwarf,
# one --lossless) damaged systematically by build/tools/mutate (truncations, size and offset
# fields set to 0 or huge, flipped bytes in the header, attrs, features and data, records and
# chunks swapped, duplicated or removed), each read by preport in its modes (table, --stats,
# --folded, -g caller, --flamegraph). Every run must end by itself within a time and memory
# bound with exit 0 (read), 1 (damaged: "FILE is damaged at offset N: reason", or for a damaged
# attr "(attr N) cannot be decoded: reason") or 3 (cannot be read: "cannot read FILE: reason"),
# never on a signal; under `make check SANITIZE=1` any sanitizer report fails too. SWEEP=1 (default: a few dozen variants a recording, one mode
# each, ~2 minutes under ASan on a busy machine), SWEEP=2 or 3: hundreds to thousands of
# variants, every mode on each.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
MUTATE="$TOP/build/tools/mutate"
[ -x "$MUTATE" ] || fail "$MUTATE is missing (make test-bins)"
[ -x "$W/mixed" ] && [ -x "$W/mixed-fp" ] || fail "the mixed workloads are missing (make test-bins)"
level=${SWEEP:-1}
limit=${SWEEP_TIMEOUT:-60}	# seconds per preport run
mem_mb=${SWEEP_MEM_MB:-2048}	# memory per preport run

if [ -n "${PRECORD_SANITIZE:-}" ]; then
	# ASan reserves terabytes of address space: bound the resident size instead of ulimit -v.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=$mem_mb:max_allocation_size_mb=$mem_mb"
	export ASAN_OPTIONS
	vlimit=unlimited
else
	vlimit=$((mem_mb * 1024))
fi

# User-space samples only (cpu-clock:u): no kernel frames, so that preport does not load
# /proc/kallsyms for every run, which costs seconds under ASan.
perf record -q -F 999 -e cpu-clock:u --call-graph fp -o perf-fp.data "$W/mixed-fp" 0.3 \
	> /dev/null 2>&1 || fail "perf record (fp) failed"
perf record -q -z -F 499 -e cpu-clock:u --call-graph dwarf,4096 -o perf-z-dwarf.data \
	"$W/hotlib" 0.3 > /dev/null 2>&1 || fail "perf record -z (dwarf) failed"
precord -q -e cpu-clock:u --no-compress -F 499 --call-graph dwarf,4096 --lossless \
	-o precord-dwarf.data -- "$W/mixed" 0.3 > /dev/null 2>&1 || fail "precord --lossless (dwarf) failed"
precord -q -e cpu-clock:u -F 999 --call-graph fp -o precord-z-fp.data -- "$W/hotlib" 0.3 \
	> /dev/null 2>&1 || fail "precord -z (fp) failed"

runs=0 variants=0 bad=0 n_ok=0 n_damaged=0 n_unreadable=0
modes="table stats folded caller flamegraph"

# check_run NAME MODE FILE: one preport run under the bounds, judged.
check_run() {
	case $2 in
	table) set -- "$1" "$2" "$3" ;;
	stats) set -- "$1" "$2" "$3" --stats ;;
	folded) set -- "$1" "$2" "$3" --folded ;;
	caller) set -- "$1" "$2" "$3" -g caller ;;
	flamegraph) set -- "$1" "$2" "$3" --flamegraph fg.svg ;;
	esac
	name=$1 mode=$2 file=$3
	shift 3
	runs=$((runs + 1))
	( ulimit -v "$vlimit"; exec timeout -k 5 "$limit" preport -j 2 -i "$file" "$@" ) \
		< /dev/null > out.txt 2> err.txt
	rc=$?
	case $rc in
	0) n_ok=$((n_ok + 1)); return 0 ;;
	1)
		n_damaged=$((n_damaged + 1))
		grep -q "$file is damaged at offset [0-9][0-9]*: [a-z]" err.txt && return 0
		# a damaged attr: its samples cannot be decoded, said with the attr and the reason
		grep -q "(attr [0-9][0-9]*) cannot be decoded: [a-z]" err.txt && return 0
		why="exit 1 without 'damaged at offset N: reason' or '(attr N) cannot be decoded: reason'"
		;;
	3)
		n_unreadable=$((n_unreadable + 1))
		grep -q "cannot read $file: [a-z]" err.txt && return 0
		why="exit 3 without 'cannot read FILE: reason'"
		;;
	124|137) why="did not finish within ${limit}s (exit $rc)" ;;
	86) why="sanitizer report" ;;
	*) [ $rc -gt 128 ] && why="killed by signal $((rc - 128))" || why="exit $rc" ;;
	esac
	bad=$((bad + 1))
	echo "BAD: $name, preport $mode: $why" >&2
	sed 's/^/    /' err.txt | head -n 20 >&2
	cp "$file" "$T/../precord-sweep-$name.data" 2> /dev/null &&
		echo "    (kept as /tmp/precord-sweep-$name.data)" >&2
	return 1
}

for rec in perf-fp perf-z-dwarf precord-dwarf precord-z-fp; do
	# The undamaged recording reads cleanly in every mode.
	for m in $modes; do
		check_run "$rec" "$m" "$rec.data" || true
		[ "$rc" -eq 0 ] || fail "$rec.data (undamaged): preport $m exit $rc"
	done
	"$MUTATE" list -l "$level" "$rec.data" > "$T/all.txt" || fail "mutate list $rec.data failed"
	# Level 1 takes every other variant, the odd ones of a recording, the even of the next.
	nrec=$((${nrec:-0} + 1))
	if [ "$level" -ge 2 ]; then cp "$T/all.txt" "$T/variants.txt"
	else awk -v k=$((nrec % 2)) 'NR % 2 == k' "$T/all.txt" > "$T/variants.txt"; fi
	i=0
	while read -r vname op args; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		"$MUTATE" apply "$rec.data" v.data "$op" $args || fail "mutate apply $op $args failed"
		variants=$((variants + 1))
		if [ "$level" -ge 2 ]; then
			for m in $modes; do check_run "$rec-$vname" "$m" v.data || true; done
		else
			set -- $modes
			shift $((i % 5))
			check_run "$rec-$vname" "$1" v.data || true
		fi
	done < "$T/variants.txt"
	echo "$rec: $i variants"
done
echo "sweep level $level: $variants variants, $runs preport runs: $n_ok read, $n_damaged damaged," \
	"$n_unreadable unreadable, $bad bad"
[ "$bad" -eq 0 ] || fail "$bad preport runs misbehaved on damaged files"
assert_ge "$variants" 80 "damaged variants"
