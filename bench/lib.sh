# Helpers shared by the bench scripts: timing, lost counts and file sizes read back by perf.
now() { date +%s.%N; }
# elapsed START END -> seconds with 2 decimals
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }'; }
# lost events (sum of PERF_RECORD_LOST counts) in a perf.data; "unread" when perf could not read it
lost_events() {
	perf script -i "$1" --show-lost-events -F comm 2>/dev/null > "$1.lost" || { echo unread; return; }
	awk '/PERF_RECORD_LOST / { n += $NF } END { print n + 0 }' "$1.lost"
}
# lost samples (PERF_RECORD_LOST_SAMPLES, from PERF_FORMAT_LOST) in a perf.data, or "unread". -g none:
# perf report unwinds nothing then (with call graphs it took 24 GB on a 2.7 GB file of 64 KiB
# stacks here, and the OOM killer took it).
lost_samples() {
	perf report -i "$1" --stdio -g none --sort comm 2>/dev/null > "$1.lost" || { echo unread; return; }
	awk '/^# Total Lost Samples:/ { print $NF; f = 1 } END { if (!f) print 0 }' "$1.lost"
}
# plus A B...: the sum, or "unread" if any is not a number
plus() { awk 'BEGIN { for (i = 1; i < ARGC; i++) { if (ARGV[i] !~ /^[0-9]+$/) { print "unread"; exit } n += ARGV[i] } print n }' "$@"; }
# lost events + lost samples in a perf.data, or "unread"
lost_all() { plus "$(lost_events "$1")" "$(lost_samples "$1")"; }
record_count() { # FILE TYPE -> count from perf report --stats
	perf report -i "$1" --stats 2>/dev/null | awk -v t="$2" '$1 == t && $2 == "events:" { print $3; f = 1; exit } END { if (!f) print 0 }'
}
size_of() { stat -c %s "$1"; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
# median of the numbers in FILE, one per line
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
