#!/bin/sh
# make demo: record the bundled workload (a program without frame pointers that spends its time
# in a shared library and in its main binary) and show the report.
set -e
cd "$(dirname "$0")/.."
out=${DEMO_DIR:-build/demo}
mkdir -p "$out"
echo "== precord -o $out/perf.data -- build/workloads/hotlib 2"
./precord -o "$out/perf.data" -- build/workloads/hotlib 2 > /dev/null
echo
if [ -x ./preport ] && ./preport --help 2>/dev/null | grep -q flamegraph; then
	echo "== preport -i $out/perf.data"
	./preport -i "$out/perf.data" --no-children | head -n 30
	./preport -i "$out/perf.data" --flamegraph "$out/flamegraph.svg" > /dev/null
	echo
	echo "flame graph: $out/flamegraph.svg (open it in a browser)"
else
	echo "== perf report -i $out/perf.data"
	perf report -i "$out/perf.data" --stdio --no-children -g none 2>/dev/null | head -n 30
fi
