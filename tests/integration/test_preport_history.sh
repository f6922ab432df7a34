# preport -i DIR and several -i: a daemon's rotated files read as one recording. precordd (the
# shipped defaults but for fast rotation) records mixed into several files, some unwound, the
# last one still with its stacks. The directory's report holds exactly the samples of its files
# (as preport and perf count them one by one) and the same stacks, whatever order the files are
# given in; --since/--until keep exactly the samples perf script --time keeps of each file, with
# the range converted by each file's CLOCK_DATA (perf script -F tod, the same clock). Refusals:
# a directory without recordings, files of other events, a file without CLOCK_DATA for --since,
# --unwind-to of several files, a malformed time.
. "$(dirname "$0")/daemon_lib.sh"

"$W/mixed" 60 2 > /dev/null &
EXTRA_CLEANUP="kill $! 2>/dev/null"
conf d.conf socket_group=none frequency=499 rotate_interval=700ms
start_listener
start_daemon d.conf
wait_ready
nfiles() { [ "$(closed_files out | wc -l)" -ge "$1" ]; }
wait_until "four finished files" nfiles 4
stop_daemon TERM
assert_eq "$DRC" 0 "exit status of precordd"
closed_files out > files.txt
echo "files: $(wc -l < files.txt)"

# sums: samples of each file as perf script and preport count them, and their stacks
sum_folded() { awk '{ n += $NF } END { print n + 0 }' "$1"; }
: > parts.folded
perf_total=0 preport_total=0
while read -r f; do
	n=$(perf script -i "$f" -F time 2> /dev/null | grep -c .) || true
	preport -q -i "$f" --folded --no-inline > one.folded 2> /dev/null || fail "preport --folded $f"
	m=$(sum_folded one.folded)
	echo "$f: perf $n, preport $m samples"
	assert_eq "$m" "$n" "samples of $f, preport against perf"
	perf_total=$((perf_total + n)) preport_total=$((preport_total + m))
	cat one.folded >> parts.folded
done < files.txt
assert_ge "$perf_total" 100 "samples in the directory"
# mixed's stacks merged: one line per distinct text, counts summed (preport --folded may print
# a text twice: frames that print alike at different addresses). Only mixed's: the last file
# still has stacks, unwound at each report, and the machine's other programs may be rebuilt
# in between (a CI loop, other work); mixed is not. Without inlined frames: preport names them
# as perf's addr2line does, whose first answer for a C++ function without a linkage name (mixed's
# inlined now()) borrows the ELF symbol's name (worker;worker), once per process and DWARF file,
# so one process per file names one more address so than one process for all (seen in CI).
merge() { awk '/^mixed;/ { c = $NF; $NF = ""; sub(/ $/, ""); n[$0] += c } END { for (s in n) print s, n[s] }' "$1" | sort; }
merge parts.folded > parts.merged
grep -q main_loop_work parts.merged || fail "no stack of mixed in the files"

preport -q -i out --folded --no-inline > dir.folded 2> dir.err || { cat dir.err; fail "preport -i DIR"; }
assert_eq "$(sum_folded dir.folded)" "$perf_total" "samples of preport -i DIR against the files' sum"
merge dir.folded > dir.sorted
diff parts.merged dir.sorted > stacks.diff || { head -20 stacks.diff; fail "the directory's stacks are not its files' stacks"; }
grep -q main_loop_work dir.folded || fail "no main_loop_work in the directory's stacks"
# several -i, newest first: read in time order all the same
set --
for f in $(sort -r files.txt); do set -- "$@" -i "$f"; done
preport -q "$@" --folded --no-inline > list.folded
merge list.folded > list.sorted
cmp -s dir.sorted list.sorted || fail "several -i report otherwise than -i DIR"
preport -q -i out --stats > stats.txt
assert_eq "$(awk '/SAMPLE events/ { print $3; exit }' stats.txt)" "$perf_total" "preport -i DIR --stats samples"

# --since/--until. Each sample's time of day (perf script -F tod, from CLOCK_DATA) against its
# perf time gives each file's offset; the range is cut between two samples at least 200 us
# apart (both printed to the us), a quarter and three quarters into the directory's samples.
while read -r f; do
	perf script -i "$f" -F tod,time 2> /dev/null | awk -v f="$f" '{ sub(/:$/, "", $3); print f, $1, $2, $3 }'
done < files.txt > tod.txt
while read -r f; do
	line=$(grep -m1 "^$f " tod.txt)
	set -- $line
	s=$(date -d "$2 ${3%.*}" +%s)
	echo "$f $(awk -v s="$s" -v fr="0.${3#*.}" -v t="$4" 'BEGIN { printf "%.6f", s + fr - t }')"
done < files.txt > offset.txt
awk 'NR == FNR { off[$1] = $2; next } { printf "%.6f\n", $4 + off[$1] }' offset.txt tod.txt | sort -n > wall.txt
n=$(wc -l < wall.txt)
cut_at() { # cut_at K: the midpoint after the K-th sample where the next is >= 200 us later
	awk -v k="$1" 'NR >= k && prev && $1 - prev >= 0.0002 { printf "%.6f\n", (prev + $1) / 2; exit } { prev = $1 }' wall.txt
}
since=$(cut_at $((n / 4))) until=$(cut_at $((3 * n / 4)))
[ -n "$since" ] && [ -n "$until" ] || fail "no gap of 200 us to cut the range at"
want=$(awk -v a="$since" -v b="$until" '$1 >= a && $1 <= b' wall.txt | grep -c .) || true
perf_in=0
while read -r f off; do
	a=$(awk -v w="$since" -v o="$off" 'BEGIN { printf "%.6f", w - o }')
	b=$(awk -v w="$until" -v o="$off" 'BEGIN { printf "%.6f", w - o }')
	k=$(perf script -i "$f" -F time --time "$a,$b" 2> /dev/null | grep -c .) || true
	perf_in=$((perf_in + k))
done < offset.txt
echo "range @$since to @$until: $want samples by their time of day, $perf_in by perf script --time per file"
assert_eq "$perf_in" "$want" "perf's per-file --time against the samples' times of day"
preport -q -i out --since "@$since" --until "@$until" --folded > range.folded || fail "preport --since/--until"
assert_eq "$(sum_folded range.folded)" "$perf_in" "samples of preport -i DIR --since --until"
assert_ge "$perf_in" 10 "samples in the range"
# the same range as local times of day (HH:MM:SS.FRAC, the date of the recording)
ls_=$(date -d "@${since%.*}" '+%Y-%m-%d %H:%M:%S').${since#*.}
lu_=$(date -d "@${until%.*}" '+%Y-%m-%d %H:%M:%S').${until#*.}
preport -q -i out --since "$ls_" --until "$lu_" --folded > range2.folded
assert_eq "$(sum_folded range2.folded)" "$perf_in" "samples of --since '$ls_' --until '$lu_'"
# open ends
preport -q -i out --until "@$since" --folded > before.folded
preport -q -i out --since "@$since" --folded > after.folded
assert_eq "$(( $(sum_folded before.folded) + $(sum_folded after.folded) ))" "$perf_total" "samples before and after a cut"

# refusals
mkdir empty
rc=0; preport -i empty 2> e.txt > /dev/null || rc=$?
assert_eq "$rc" 3 "exit status of -i on a directory without recordings"
grep -q "is a directory without precord-\*.data files" e.txt || { cat e.txt; fail "message of an empty directory"; }
perf record -q -e cpu-clock -o perf.data -- "$W/mixed" 0.2 > /dev/null 2>&1 || fail "perf record"
rc=0; preport -i perf.data --since "@$since" 2> e.txt > /dev/null || rc=$?
assert_eq "$rc" 2 "exit status of --since without CLOCK_DATA"
grep -q "no CLOCK_DATA" e.txt || { cat e.txt; fail "message of --since without CLOCK_DATA"; }
rc=0; preport -i perf.data -i out 2> e.txt > /dev/null || rc=$?
assert_eq "$rc" 2 "exit status of files of other events"
grep -q "as one recording" e.txt || { cat e.txt; fail "message of files of other events"; }
rc=0; preport -i out --unwind-to x.data 2> e.txt || rc=$?
assert_eq "$rc" 2 "exit status of --unwind-to with several files"
rc=0; preport -i out --since 25:00 2> e.txt > /dev/null || rc=$?
assert_eq "$rc" 2 "exit status of a bad --since"
grep -q "invalid --since '25:00'" e.txt || { cat e.txt; fail "message of a bad --since"; }
echo ok
