#!/bin/sh
# A file sampled at a fixed period (perf record -c N) has no PERF_SAMPLE_PERIOD: each sample
# stands for the attr's sample_period (perf's evsel__parse_sample), so the header's event count
# is N times the samples, as perf report prints it, and the pprof profile's value is N a sample.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x "$W/inlines" ] || fail "the inlines workload is missing (make test-bins)"

perf record -q -e cpu-clock -c 100000 -o c.data -- "$W/inlines" > /dev/null 2>&1 ||
	fail "perf record -c 100000 failed"
hdr() { grep -E '^# (Samples|Event count)' || true; }
perf report -i c.data --stdio 2> /dev/null | hdr > perf.hdr
preport -i c.data 2> /dev/null | hdr > preport.hdr
[ -s perf.hdr ] || fail "no header lines in perf report's output"
cmp -s perf.hdr preport.hdr || { diff perf.hdr preport.hdr; fail "header lines differ from perf report's"; }
n=$(sed -n 's/^# Event count (approx.): //p' preport.hdr)
assert_ge "${n:-0}" 100000000 "event count of a -c 100000 file of the inlines workload"
VIEWS="--no-children -g none --sort sym|--no-children -g none" compare_reports "perf -c 100000" c.data

# pprof: each sample's cpu value is the period, its samples value stays a count
preport -i c.data --pprof c.pb.gz > /dev/null 2>&1 || fail "preport --pprof failed"
if command -v go > /dev/null 2>&1; then
	export HOME="$PWD/home" GOCACHE="$PWD/gocache" GOPROXY=off GOFLAGS=
	mkdir -p "$HOME"
	go tool pprof -raw c.pb.gz > raw.txt 2> /dev/null || fail "go tool pprof -raw failed"
	bad=$(awk '/^ +[0-9]+ +[0-9]+: / { n++; if ($2 + 0 != 100000 * $1) b++ } END { print n ? b + 0 : "none" }' raw.txt)
	assert_eq "$bad" 0 "pprof samples whose cpu value is not 100000 per sample"
fi
echo ok
