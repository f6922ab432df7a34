# preport reads perf's pipe mode (perf record -o -): live from the pipe and from a file holding
# the stream, with perf report's table line for line (perf has no Children column for a pipe:
# nor has preport by default) and perf's --stats counts (its ATTR and FEATURE records included);
# the same report as preport's of the stream rewritten as a file (--repair), --children and all;
# --unwind-to from a pipe; a tracepoint stream (its formats come as a HEADER_TRACING_DATA record
# with its payload outside its size); a -z stream, which perf 6.1 itself cannot decompress; and
# a stream cut inside a record: damage at that offset of the stream, --force for the rest.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
# rows of a table (-g none), headers and blank lines dropped
table() { grep -E '^ +[0-9]+\.[0-9]+%' || true; }

# Live: perf record into preport through a pipe; perf reads the same stream from a file.
MIXED_CPU=1 perf record -q -e cpu-clock -F 2000 --call-graph dwarf -o - -- "$W/mixed" 1 2 2> rec.err |
	tee s.pipe | preport -i - -g none > live.txt 2> live.err || { cat rec.err live.err; fail "perf record -o - | preport -i -: exit $?"; }
[ "$(head -c 16 s.pipe | od -An -tx1 | tr -d ' \n')" = 50455246494c45321000000000000000 ] ||
	fail "perf record -o - did not write a pipe-mode header"
perf report -i s.pipe --stdio -g none 2> /dev/null | table > perf.txt
table < live.txt > pre.txt
[ "$(wc -l < perf.txt)" -ge 5 ] || fail "perf printed too little"
grep -q "Children" live.txt && fail "preport shows a Children column for a pipe, perf does not"
diff perf.txt pre.txt || fail "the table of the stream differs from perf's"
echo "ok: live from the pipe: $(wc -l < pre.txt) rows as perf prints them"
preport -i s.pipe -g none | table > file.txt
cmp -s pre.txt file.txt || fail "the stream from a file differs from the stream from the pipe"

# --stats: perf's counts, the records that carry the stream's attrs and features included
perf report -i s.pipe --stats 2> /dev/null | grep "events:" > perf.stats
preport --stats -i s.pipe | grep "events:" > pre.stats
grep -q "FEATURE events:" perf.stats || fail "perf counted no FEATURE records"
diff perf.stats pre.stats || fail "--stats differs from perf's"
echo "ok: --stats: $(wc -l < pre.stats) lines as perf's"

# The stream rewritten as a file reports the same, call graphs and children included.
preport --repair s.data -i s.pipe 2> /dev/null || fail "preport --repair of the stream exit $?"
for o in "--no-children -g caller" "--children -g caller" "--no-children -g callee --sort sym"; do
	# shellcheck disable=SC2086
	preport -i s.pipe $o > a.txt || fail "preport -i s.pipe $o exit $?"
	# shellcheck disable=SC2086
	preport -i s.data $o > b.txt || fail "preport -i s.data $o exit $?"
	cmp -s a.txt b.txt || { diff a.txt b.txt | head; fail "$o: the stream and its file differ"; }
done
# and the file is perf's too
perf report -i s.data --stdio -g none --no-children 2> /dev/null | table > perf-file.txt
diff perf.txt perf-file.txt || fail "perf reads the rewritten file otherwise than the stream"

# --unwind-to from a pipe (its two passes read the one stream)
preport --unwind-to u.data -i - < /dev/null > /dev/null 2>&1 && fail "--unwind-to from an empty stdin exit 0"
cat s.pipe | preport --unwind-to u.data -i - 2> u.err || { cat u.err; fail "--unwind-to from a pipe exit $?"; }
preport -i u.data --no-children -g none | table > u.txt
preport -i s.pipe --no-children -g none | table > s.txt
diff s.txt u.txt || fail "the unwound copy of the stream reports otherwise"

# A tracepoint stream: the formats' record and its payload.
perf record -q -e sched:sched_switch -a -o - -- "$W/spin_threads" 0.2 2> /dev/null > tp.pipe ||
	fail "perf record -e sched:sched_switch -o - failed"
perf report -i tp.pipe --stdio 2> /dev/null | table > perf-tp.txt
preport -i tp.pipe 2> tp.err | table > pre-tp.txt
[ "$(wc -l < perf-tp.txt)" -ge 1 ] || fail "perf printed nothing for the tracepoint stream"
diff perf-tp.txt pre-tp.txt || { cat tp.err; fail "the tracepoint stream's table differs from perf's"; }
echo "ok: tracepoint stream: $(wc -l < pre-tp.txt) rows as perf prints them"

# -z: perf 6.1 says "Couldn't decompress data"; preport reads it as the same recording without -z
MIXED_CPU=1 perf record -q -z -e cpu-clock -F 2000 -o - -- "$W/mixed" 0.5 2 2> /dev/null > z.pipe ||
	fail "perf record -z -o - failed"
preport --stats -i z.pipe > z.stats 2> z.err || { cat z.err; fail "preport --stats of a -z stream exit $?"; }
grep -q "COMPRESSED events:" z.stats || fail "no COMPRESSED records counted in the -z stream"
n=$(awk '$1 == "SAMPLE" { print $3; exit }' z.stats)
assert_ge "${n:-0}" 500 "samples read from the -z stream"
preport -i z.pipe -g none | table > z.txt
[ "$(wc -l < z.txt)" -ge 3 ] || fail "no table from the -z stream"

# Cut inside a record: damage at the stream's offset, the report of what came before on --force.
size=$(wc -c < s.pipe)
cut=$((size / 2 + 3))
rc=0; head -c "$cut" s.pipe | preport -i - -g none > cut.txt 2> cut.err || rc=$?
[ "$rc" -eq 1 ] || { cat cut.err; fail "a cut stream: exit $rc, not 1"; }
grep -qE "^preport: - is damaged at offset [0-9]+: the stream ended inside a record" cut.err ||
	{ cat cut.err; fail "a cut stream: no damage message with the stream's offset"; }
off=$(sed -n 's/.*damaged at offset \([0-9]*\):.*/\1/p' cut.err)
[ "$off" -le "$cut" ] && [ "$off" -gt $((cut - 65536)) ] || fail "damage offset $off is not in the stream's last record (cut at $cut)"
head -c "$cut" s.pipe | preport -i - -g none --force 2> /dev/null | table > cutf.txt
[ "$(wc -l < cutf.txt)" -ge 3 ] || fail "--force: no report of the stream's first half"
echo ok
