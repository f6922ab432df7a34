#!/bin/sh
# The perf.data writer judged by perf 6.1 alone: build/tools/synth_perf writes a file from
# records it synthesizes (kernel MMAP, COMM, MMAP2 of itself, 300 cpu-clock samples from two
# appending threads with FINISHED_ROUND bookkeeping), plain and zstd-compressed; perf report,
# perf report --stats, perf script, perf report --header-only and perf buildid-list must read it
# with nothing on stderr and show the symbols, counts and header facts we put in.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
TOOL="$TOP/build/tools/synth_perf"
[ -x "$TOOL" ] || fail "$TOOL is missing (make test-bins)"

# quiet NAME CMD...: run CMD with stdout to $T/NAME.out; its stderr must stay empty.
quiet() {
	name=$1
	shift
	"$@" > "$T/$name.out" 2> "$T/$name.err" || fail "$* exited $?"
	if [ -s "$T/$name.err" ]; then
		cat "$T/$name.err" >&2
		fail "$* wrote to stderr"
	fi
}
# count PATTERN FILE: lines matching the extended regex.
count() { grep -cE "$1" "$2" || true; }
has() { grep -qE "$1" "$2" || fail "$3: no line matching '$1' in $(basename "$2")"; }

check_file() {
	f=$1 what=$2

	quiet report perf report -i "$f" --stdio
	has "Samples: 300 +of event 'cpu-clock'" "$T/report.out" "$what report"
	has "Event count \(approx\.\): 75000000" "$T/report.out" "$what report"
	has "^ +66\.67% +synthdemo +synth_perf +\[\.\] hot_function" "$T/report.out" "$what report"
	has "^ +33\.33% +synthdemo +synth_perf +\[\.\] cold_function" "$T/report.out" "$what report"

	quiet stats perf report -i "$f" --stats
	has "^ +SAMPLE events: +300 " "$T/stats.out" "$what stats"
	has "^ +COMM events: +1 " "$T/stats.out" "$what stats"
	has "^ +MMAP2 events: +1 " "$T/stats.out" "$what stats"
	rounds=$(sed -n 's/^ *FINISHED_ROUND events: *\([0-9]*\).*/\1/p' "$T/stats.out")
	assert_ge "${rounds:-0}" 2 "$what FINISHED_ROUND events"
	if grep -qiE "LOST|out of order" "$T/stats.out"; then
		grep -iE "LOST|out of order" "$T/stats.out" >&2
		fail "$what stats report lost or out-of-order events"
	fi

	quiet script perf script -i "$f"
	assert_eq "$(count . "$T/script.out")" 300 "$what perf script lines"
	assert_eq "$(count "^ +synthdemo +4242 .*cpu-clock: .* hot_function\+0x[0-9a-f]+ \(.*/synth_perf\)$" \
		"$T/script.out")" 200 "$what hot_function samples"
	assert_eq "$(count "^ +synthdemo +4242 .*cpu-clock: .* cold_function\+0x[0-9a-f]+ \(.*/synth_perf\)$" \
		"$T/script.out")" 100 "$what cold_function samples"
	# perf delivers in time order: the script's timestamps never go back.
	sed -n 's/.*\] *\([0-9]*\.[0-9]*\):.*/\1/p' "$T/script.out" |
		awk 'NR > 1 && $1 < prev { bad = 1 } { prev = $1 } END { exit bad }' ||
		fail "$what perf script output is not in time order"

	quiet header perf report -i "$f" --header-only
	has "^# hostname : $(uname -n)$" "$T/header.out" "$what header"
	has "^# os release : $(uname -r)$" "$T/header.out" "$what header"
	has "^# perf version : precord " "$T/header.out" "$what header"
	has "^# arch : $(uname -m)$" "$T/header.out" "$what header"
	has "^# nrcpus online : $(getconf _NPROCESSORS_ONLN)$" "$T/header.out" "$what header"
	has "^# total memory : [1-9][0-9]* kB$" "$T/header.out" "$what header"
	has "^# cmdline : .*/synth_perf .*$(basename "$f")" "$T/header.out" "$what header"
	has "^# event : name = cpu-clock, .*id = \{ 101, 102 \}, type = 1, size = 128" "$T/header.out" \
		"$what header"
	has "sample_type = IP\|TID\|TIME\|CPU\|PERIOD" "$T/header.out" "$what header"
	has "^# time of first sample : [0-9]+\.[0-9]+$" "$T/header.out" "$what header"
	if [ "$(uname -m)" = x86_64 ]; then
		has "^# cpuid : (GenuineIntel|AuthenticAMD|HygonGenuine),[0-9]+,[0-9]+,[0-9]+$" \
			"$T/header.out" "$what header"
	fi

	# BUILD_ID: exactly what the ELF note of the binary says.
	quiet buildids perf buildid-list -i "$f"
	if command -v readelf > /dev/null 2>&1; then
		id=$(readelf -n "$TOOL" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
		[ -n "$id" ] || fail "readelf found no build id in $TOOL"
		has "^$id .*/synth_perf$" "$T/buildids.out" "$what buildid-list"
	fi
}

quiet synth "$TOOL" plain.data
check_file plain.data plain
quiet header perf report -i plain.data --header-only
if grep -q "compressed :" "$T/header.out"; then
	fail "plain file claims compression"
fi

quiet synth "$TOOL" -z 3 zstd.data
check_file zstd.data zstd
has "^# compressed : Zstd, level = 3, ratio = [1-9][0-9]*$" "$T/header.out" "zstd header"
quiet stats perf report -i zstd.data --stats
has "^ +COMPRESSED events: +[1-9][0-9]* " "$T/stats.out" "zstd stats"

echo "writer: perf reads plain and compressed files cleanly"
