# Sourced by integration tests: a scratch directory removed at exit (kept with KEEP_T=1, to look
# at a failure), and small assertions.
# Each test is a plain sh script: exit 0 pass, 77 skip, anything else fail.
set -eu
TOP=${PRECORD_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
TESTS_DIR=$(cd "$(dirname "$0")" && pwd) # this directory, before the cd below
W="$TOP/build/workloads"
T=$(mktemp -d /tmp/precord-test.XXXXXX)
trap '[ -n "${KEEP_T:-}" ] || rm -rf "$T"' EXIT INT TERM
cd "$T"

# user_bins FILE...: copies of FILEs (and of precord) in $T/bin, for the test users to run: the
# tree may sit where they cannot go (a clone in /root, which is 0700). Sets UB to $T/bin.
user_bins() {
	UB="$T/bin"
	mkdir -p "$UB"
	cp "$TOP/precord" "$@" "$UB/"
	chmod 755 "$T" "$UB"
	chmod -R a+rX "$UB"
}

fail() { echo "FAIL: $*" >&2; [ -z "${KEEP_T:-}" ] || echo "(KEEP_T: its files are kept in $T)" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
# assert_ge ACTUAL MIN WHAT
assert_ge() { [ "$1" -ge "$2" ] || fail "$3: $1 < $2"; }
assert_le() { [ "$1" -le "$2" ] || fail "$3: $1 > $2"; }
assert_eq() { [ "$1" = "$2" ] || fail "$3: '$1' != '$2'"; }
# perf must read FILE with nothing on stderr.
perf_clean() {
	perf report -i "$1" --stdio > "$T/perf-report.out" 2> "$T/perf-report.err" || fail "perf report exit $? on $1"
	[ ! -s "$T/perf-report.err" ] || { cat "$T/perf-report.err" >&2; fail "perf report wrote to stderr on $1"; }
}

# The small-ring --lossless settings of test_lossless_matrix and test_lossless_held_cpus: a
# sched_yield storm at perf's settings on 1 MiB rings with a high mark of 2% (the room above it
# lasts about 13 ms at the storm's rate) and a low one of 1%, so that each run pauses often.
LOSSLESS_SMALL="-e cpu-clock -F 20000 --switch-events --call-graph dwarf -m 256 --lossless --high-watermark 2 --low-watermark 1"
# lossless_refused NAME: whether NAME.err is precord's refusal of an explicit -m whose room
# above the high mark is too short for the pause timed at start (a starved machine; exit 2,
# before the command started: precord.1, LOSSLESS MODE); sets refused_min to the -m it named,
# and refused_twice to the one it named for a pause twice as slow (refused_min if none).
lossless_refused() {
	grep -q "cannot honour -m [0-9]* ([0-9]* KiB per CPU) here: pausing takes up to [0-9.]* ms" "$1.err" || return 1
	refused_min=$(sed -n 's/.*the minimum is -m \([0-9]*\) .*/\1/p' "$1.err")
	[ -n "$refused_min" ] || fail "$1: refused without naming the minimum"
	refused_twice=$(sed -n 's/.* and -m \([0-9]*\) ([0-9]* KiB) for a pause twice as slow.*/\1/p' "$1.err")
	: "${refused_twice:=$refused_min}"
	assert_ge "$refused_twice" "$refused_min" "$1: the ring named for a pause twice as slow"
}
# paused_within_run ERR DATA: precord's summary in ERR and the pause statistics preport --stats
# reads from DATA both put the paused time at no more than the run (a pause in progress at a
# stop counts until the run's end, not until the summary). Sets paused_pct (the summary's).
paused_within_run() {
	paused_pct=$(sed -n 's/.* s paused (\([0-9.]*\)% of the run).*/\1/p' "$1")
	[ -n "$paused_pct" ] || { cat "$1"; fail "$1: no paused time in the summary"; }
	awk -v p="$paused_pct" 'BEGIN { exit !(p <= 100) }' || { cat "$1"; fail "$1: paused $paused_pct% of the run"; }
	preport -i "$2" --stats > "$T/paused.stats" 2> /dev/null || fail "$2: preport --stats exit $?"
	_fp=$(sed -n 's/.*paused ms: *[0-9.]*  *( *\([0-9.]*\)% of.*/\1/p' "$T/paused.stats")
	[ -n "$_fp" ] || { cat "$T/paused.stats"; fail "$2: no pause statistics in the file"; }
	awk -v p="$_fp" 'BEGIN { exit !(p <= 100) }' || fail "$2: the file says paused $_fp% of the run"
}
# lossless_storm_ok NAME: the verdict on NAME.err (precord's stderr, with the storm's
# YIELD_STORM_REPORT line) and NAME.data: the summary says 0 lost, perf report --stats reads the
# file quietly and finds no LOST / LOST_SAMPLES, and the SWITCH records are at least twice the
# switches the storm counted itself. Sets S (the switches) and sw (the SWITCH records).
lossless_storm_ok() {
	grep -q "^\[ precord: 0 lost \]" "$1.err" || { cat "$1.err"; fail "$1: summary does not say 0 lost"; }
	perf report -i "$1.data" --stats > "$1.stats" 2> "$1.perr" || fail "$1: perf report --stats exit $?"
	[ ! -s "$1.perr" ] || { cat "$1.perr"; fail "$1: perf report wrote to stderr"; }
	! grep -qE "^ *LOST(_SAMPLES)? events" "$1.stats" || fail "$1: perf report --stats shows losses"
	S=$(sed -n 's/^yield_storm: threads [0-9]* switches \([0-9]*\) .*/\1/p' "$1.err")
	sw=$(awk '$1 == "SWITCH" && $2 == "events:" { print $3; exit }' "$1.stats")
	[ -n "$S" ] || fail "$1: no switch report from yield_storm"
	assert_ge "${sw:-0}" $((2 * S)) "$1: SWITCH records"
}

# Self percentage of symbol SYM in FILE per perf report, summed over its rows (two decimals);
# 0 when absent. perf report --sort sym sometimes splits one function of one file into two rows
# (hot_lib_work as 62.31% and 3.63% of one recording of perf's own, 51.02% and more in a CI
# run; not with --sort pid,dso,sym): the first row alone is not the function's share.
# Usage: sym_pct FILE SYM [extra perf report args]
sym_pct() {
	f=$1 s=$2; shift 2
	perf report -i "$f" --stdio --no-children --sort sym -g none -q "$@" 2>/dev/null |
		awk -v s="$s" '$NF == s { gsub("%", "", $1); t += $1 } END { printf "%.2f\n", t }'
}
# same_graph A B: perf report's call graph text A and preport's B are the same graph, up to
# a few samples' worth (same_graph.awk)
same_graph() { awk -f "$TESTS_DIR/same_graph.awk" "$1" "$2"; }
# big_rows: a table without its rows whose shares are all under 0.5%: those of one or two
# samples, where the ends of DWARF unwinds (perf's and preport's) may differ; where a DWARF
# unwind ends on a file's data, perf names the address after the symbol before it
# (__quick_exit_funcs+0x7), preport shows it as an address
big_rows() {
	grep -vE '^$|^#$|^# (To display|\(Tip)' | awk '
		/^#/ { print; next }
		{ n = 0; big = 0
		  for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+%$/) { n++; if ($i + 0 >= 0.5) big = 1 }
		  if (!n || big) print }'
}
# same_table WHAT FILE ARGS...: perf report --stdio's and preport's tables of FILE with ARGS
# are the same text, rows of 0.5% and more (big_rows)
same_table() {
	_what=$1 _f=$2
	shift 2
	perf report -i "$_f" --stdio "$@" 2> /dev/null | big_rows > "$T/perf.t"
	preport -i "$_f" "$@" > "$T/pre.out" || fail "preport $* exit $?"
	big_rows < "$T/pre.out" > "$T/pre.t"
	[ "$(grep -vc '^#' "$T/perf.t")" -ge 1 ] || { cat "$T/perf.t"; fail "perf printed too little for $*"; }
	cmp -s "$T/perf.t" "$T/pre.t" ||
		{ diff "$T/perf.t" "$T/pre.t" | head -n 20 >&2; fail "$_f: $_what: $* differs from perf's"; }
	echo "ok: $_f: $*: $(wc -l < "$T/pre.t") lines as perf prints them"
}
# upto1: a report's text down to the first row under 1%, without blank and comment lines (perf
# 6.1 splits a few small rows of inlined functions in two where preport has one, and orders
# rows of equal share its own way: below 1% the rows' order differs).
upto1() { awk '/^ +[0-9.]+% / && $1 + 0 < 1 { exit } /^$/ || /^#/ { next } { print }'; }
# perf_folded FILE [--no-inline]: perf script's call chains collapsed like stackcollapse-perf.pl,
# sorted: "comm;root;...;leaf COUNT", an unresolved frame named [dso basename], an inlined frame
# ("NAME (inlined)", no dso) named NAME, argument lists cut at the first "(" other than
# "(anonymous namespace)", a sample without frames as its comm alone.
perf_folded() {
	perf script -i "$1" -F comm,ip,sym,dso ${2:-} 2> /dev/null | awk '
		/^[^\t]/ { comm = $0; sub(/ +$/, "", comm); gsub(/[ ;]/, "_", comm); n = 0; in_s = 1; next }
		/^\t/ {
			line = $0; sub(/^[\t ]+[0-9a-f]+ /, "", line)
			dso = line; sub(/.* \(/, "", dso); sub(/\)$/, "", dso)
			sym = line; sub(/ \([^(]*\)$/, "", sym)
			if (sym == "[unknown]") { sub(/.*\//, "", dso); sym = (dso ~ /^\[/) ? dso : "[" dso "]" }
			gsub(/\(anonymous namespace\)/, "\001", sym)
			if (index(sym, "(")) sym = substr(sym, 1, index(sym, "(") - 1)
			gsub(/\001/, "(anonymous namespace)", sym)
			gsub(/;/, ":", sym)
			f[++n] = sym; next
		}
		/^$/ { if (in_s) { s = comm; for (i = n; i >= 1; i--) s = s ";" f[i]; c[s]++ } in_s = 0 }
		END { if (in_s) { s = comm; for (i = n; i >= 1; i--) s = s ";" f[i]; c[s]++ }
		      for (s in c) print s, c[s] }' | LC_ALL=C sort
}
# lost_agree WHAT FILE SAMPLES LOST: precord's summary counted SAMPLES samples, LOST of them lost
# (not written): perf reads FILE without complaint, and perf and preport agree, LOST lost and
# the rest in the file. Sets in_file; leaves perf's --stats in pstats, its report's stderr in
# perr.
lost_agree() {
	perf report -i "$2" --stats > pstats 2> perr || { cat perr; fail "$1: perf report --stats exit $?"; }
	perf report -i "$2" --stdio > prep 2> perr || { cat perr; fail "$1: perf report exit $?"; }
	! grep -iE "error|decompress|can't|fail" perr || fail "$1: perf report complains"
	in_file=$(awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }' pstats)
	echo "$1: summary $3 samples, $4 lost; perf: ${in_file:-0} in the file"
	assert_eq "$(sed -n 's/^# Total Lost Samples: //p' prep)" "$4" "$1: lost samples, perf vs the summary"
	assert_eq "$((in_file + $4))" "$3" "$1: samples in the file + lost vs the summary"
	preport -i "$2" > rrep 2> rerr || { cat rerr; fail "$1: preport exit $?"; }
	assert_eq "$(sed -n 's/^# Total Lost Samples: //p' rrep)" "$4" "$1: lost samples, preport vs the summary"
}
# |a - b| <= tol for decimal numbers
close_to() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
# Count of records of TYPE (e.g. SAMPLE, LOST, SWITCH_CPU_WIDE) in perf report --stats.
stat_count() {
	perf report -i "$1" --stats 2>/dev/null | awk -v t="$2" '$1 == t && $2 == "events:" { print $3; f=1; exit } END { if (!f) print 0 }'
}

# preport's tests. rows CMD...: the table rows of a perf report / preport --stdio run
# ("PCT [PCT] [x] NAME"), header and blank lines dropped.
rows() { "$@" 2>/dev/null | grep -E '^ +[0-9]+\.[0-9]+%' || true; }
# agree WHAT PERF_ROWS PREPORT_ROWS: every row above 1% in perf's table has its counterpart in the
# same place in preport's, each percentage within 1 point. perf adds rows for functions inlined
# into others ("NAME (inlined)", from the debug info of the call sites), which preport does not
# expand: those rows are set aside, and a preport row whose name perf does not show at all must
# either stay below 1% or match one of them in both percentages (perf names the frame of
# __libc_start_main by its inlined body), or the sum of perf's rows of its name (perf 6.1 splits
# an inlined function in two rows now and then: ld.so's _dl_start_final).
agree() {
	awk -v what="$1" -v min="${MIN_ROWS:-3}" '
		function parse(line, a,   n, i, k, name) {
			n = split(line, f, " ")
			a["p1"] = f[1] + 0; a["p2"] = (f[2] ~ /%$/) ? f[2] + 0 : -1
			i = (f[2] ~ /%$/) ? 3 : 2
			name = ""
			for (k = i; k <= n; k++) name = name (k > i ? " " : "") f[k]
			a["name"] = name
		}
		function near(a, b) { return (a - b <= 1 && b - a <= 1) }
		FNR == NR {
			parse($0, A)
			if (A["name"] ~ / \(inlined\)$/) {
				ni++; i1[ni] = A["p1"]; i2[ni] = A["p2"]
				# perf may split one inlined function into rows (its hist tree
				# compares inlined names by name, others by address): their sum too
				s1[A["name"]] += A["p1"]; s2[A["name"]] += A["p2"]
				next
			}
			np++; perf[np] = $0; known[A["name"]] = 1; next
		}
		{
			parse($0, B)
			if (!(B["name"] in known)) {
				if (B["p1"] <= 1 && B["p2"] <= 1) next
				if ((B["name"] in s1) && near(s1[B["name"]], B["p1"]) && near(s2[B["name"]], B["p2"]))
					next
				for (k = 1; k <= ni; k++)
					if (near(i1[k], B["p1"]) && near(i2[k], B["p2"])) break
				if (k > ni) { printf "%s: preport row not in perf report: %s\n", what, $0; bad = 1 }
				next
			}
			nq++; pre[nq] = $0; pname[nq] = B["name"]
		}
		END {
			for (r = 1; r <= np; r++) {
				parse(perf[r], A)
				if (A["p1"] <= 1 && A["p2"] <= 1) continue
				checked++
				if (r > nq) { printf "%s: row %d missing in preport: %s\n", what, r, perf[r]; bad = 1; continue }
				parse(pre[r], B)
				if (A["name"] != B["name"] && A["p1"] - B["p1"] <= 0.1 && B["p1"] - A["p1"] <= 0.1) {
					# rows whose percentages tie to 0.1 point may come in either order:
					# compare the perf row with the nearest preport row of the same name
					# (a name may have several rows: ld.so has a _start too)
					for (d = 1; d <= 2; d++) {
						if (r - d >= 1 && pname[r - d] == A["name"]) { parse(pre[r - d], B); break }
						if (r + d <= nq && pname[r + d] == A["name"]) { parse(pre[r + d], B); break }
					}
				}
				if (A["name"] != B["name"] || !near(A["p1"], B["p1"]) || !near(A["p2"], B["p2"])) {
					printf "%s: row %d differs:\n  perf:    %s\n  preport: %s\n", what, r, perf[r], pre[r]
					bad = 1
				}
			}
			if (checked < min) { printf "%s: only %d rows above 1%%\n", what, checked; bad = 1 }
			exit bad
		}' "$2" "$3" >&2
}
# compare_reports WHAT FILE [ARGS...]: perf report and preport agree on FILE in the --no-children
# and the children views sorted by symbol, and in the default comm,dso,sym view (or in the views
# listed in $VIEWS, separated by '|').
compare_reports() {
	_what=$1 _f=$2
	shift 2
	_extra=$*
	_views=${VIEWS:-"--no-children -g none --sort sym|--children -g none --sort sym|--no-children -g none"}
	_IFS=$IFS
	IFS='|'
	# shellcheck disable=SC2086
	set -- $_views
	IFS=$_IFS
	for _view in "$@"; do
		# shellcheck disable=SC2086
		rows perf report -i "$_f" --stdio $_view $_extra > "$T/perf.rows"
		# shellcheck disable=SC2086
		rows preport -i "$_f" $_view $_extra > "$T/preport.rows"
		agree "$_what ($_view $_extra)" "$T/perf.rows" "$T/preport.rows" ||
			{ echo "perf:"; head -n 15 "$T/perf.rows"; echo "preport:"; head -n 15 "$T/preport.rows"; fail "$_what: preport disagrees with perf report ($_view $_extra)"; } >&2
		echo "ok: $_what ($_view${_extra:+ $_extra}): $(awk '$1 + 0 > 1' "$T/perf.rows" | wc -l) rows above 1% agree"
	done
}
# wait_samples FILE N: wait (at most 120 s) until a recorder still writing FILE has put N samples
# in it, per preport --stats, instead of for a fixed time that a busy machine or a sanitized
# build may not honour. Returns 1 on the time limit.
wait_samples() {
	_ws=0
	while [ "$(preport -q -i "$1" --stats 2> /dev/null |
		awk '$1 == "SAMPLE" { print $3; f = 1; exit } END { if (!f) print 0 }')" -lt "$2" ]; do
		_ws=$((_ws + 1))
		[ $_ws -lt 1200 ] || return 1
		sleep 0.1
	done
}

# leaf_sources: lib.c, an exported function lib_leaf (a loop), and prog.c, whose main calls a
# static loop main_spin that then calls lib_leaf: about half of the samples in each, for the tests
# of symbols a program's files do or do not give.
leaf_sources() {
	cat > lib.c << 'SRC'
__attribute__((noinline)) long lib_leaf(long n)
{
	long a = 0;
	for (long i = 0; i < n; i++)
		a += i ^ (a >> 3);
	return a;
}
SRC
	cat > prog.c << 'SRC'
long lib_leaf(long n);
static __attribute__((noinline)) long main_spin(long n)
{
	long a = 0;
	for (long i = 0; i < n; i++)
		a += i * 3 ^ (a >> 5);
	return a + lib_leaf(n);
}
volatile long sink;
int main(void) { sink = main_spin(300000000L); return 0; }
SRC
}

# Waiting for a condition, never for a time: the machine may be busy.
# wait_until WHAT CMD...: runs CMD every 20 ms until it succeeds. The bound of a minute is only
# there to end a test whose condition never comes (run.sh's limit would, later).
wait_until() {
	_what=$1
	shift
	_n=0
	until "$@"; do
		_n=$((_n + 1))
		[ "$_n" -lt 3000 ] || fail "waited a minute for $_what"
		sleep 0.02
	done
}
# cpu_ms PID: CPU time (user + system, all threads) that PID has used, in ms.
cpu_ms() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' "/proc/$1/stat"
}
_cpu_reached() { kill -0 "$1" 2> /dev/null || fail "pid $1 ended"; [ "$(cpu_ms "$1")" -ge "$2" ]; }
# wait_cpu PID MS: until PID has used MS ms more of CPU time: as many samples of it, however
# busy the machine is (cpu-clock counts its CPU time).
wait_cpu() { wait_until "$2 ms of CPU time in pid $1" _cpu_reached "$1" $(( $(cpu_ms "$1") + $2 )); }
# thread_cpu PID: the CPU time (ms) of each of PID's threads, in the order they were created
thread_cpu() {
	for _tid in $(ls "/proc/$1/task" | sort -n); do printf '%s ' "$(cpu_ms "$1/task/$_tid")"; done
}
# share_pct BEFORE AFTER K: thread K's percentage (1: the main thread) of the CPU time the
# process used between two thread_cpu readings: what a cpu-clock recording of that time finds
# in it, whichever thread the machine's load favoured
share_pct() {
	echo "$1 | $2" | awk -v k="$3" '{
		n = 0; for (i = 1; $i != "|"; i++) n++
		for (i = 1; i <= n; i++) { d = $(n + 1 + i) - $i; t += d; if (i == k) m = d }
		printf "%.2f\n", t ? m * 100 / t : 0 }'
}

# has_perf_events PID: PID holds perf event fds (a recorder has opened its events).
has_perf_events() { ls -l "/proc/$1/fd" 2> /dev/null | grep -q 'perf_event'; }
# has_line FILE: FILE holds a whole line (a workload printed its pid).
has_line() { [ -n "$(sed -n 1p "$1" 2> /dev/null)" ]; }
# state PID: the process's state letter from /proc (R, S, D, T, t, Z, ...); empty once it is gone.
state() { sed -n 's/.*) \([A-Za-z]\).*/\1/p' "/proc/$1/stat" 2> /dev/null; }
# is_stopped PID: every thread of PID has stopped (a group stop, SIGSTOP, is complete).
is_stopped() {
	_any=
	for _s in /proc/"$1"/task/*/stat; do
		[ -e "$_s" ] || return 1
		case $(sed -n 's/.*) \([A-Za-z]\).*/\1/p' "$_s" 2> /dev/null) in T|t) _any=1 ;; *) return 1 ;; esac
	done
	[ -n "$_any" ]
}
# stop_pid PID: SIGSTOP PID and wait until all its threads have stopped (the signal alone returns
# before they have, and a busy machine may take its time to schedule them).
stop_pid() { kill -STOP "$1"; wait_until "pid $1 to stop" is_stopped "$1"; }
# cg_frozen DIR: the kernel reports the cgroup DIR frozen (every task in it is).
cg_frozen() { grep -qx 'frozen 1' "$1/cgroup.events" 2> /dev/null; }
# cg_of PID: the directory of PID's cgroup in the (first) cgroup2 mount; empty without one.
cg_of() {
	_m=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2" && $4 == "/") { print $5; exit } break } }' /proc/self/mountinfo)
	_p=$(sed -n 's/^0:://p' "/proc/$1/cgroup" 2> /dev/null)
	[ -n "$_m" ] && [ -n "$_p" ] && echo "$_m$_p" | sed 's|/$||'
}
# paused PID: PID cannot run: its cgroup is frozen (as the kernel reports it) or it is stopped.
paused() { _c=$(cg_of "$1"); { [ -n "$_c" ] && cg_frozen "$_c"; } || is_stopped "$1"; }
