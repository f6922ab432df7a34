#!/bin/sh
# preport on bad input: a missing file, a file that is not perf.data, a directory, an empty file,
# bad options, unwritable outputs: one clear message and the exit status `preport --help`
# documents (1 damaged, 2 bad usage, 3 cannot read or write). Then every file of tests/corpus
# (hand-made damaged perf.data and fuzzer finds) through each output of preport: the status
# EXPECT gives (clean 0, damaged or undecodable 1, refused 3), 1 or 3 for files EXPECT does not list, never a
# signal.
. "$(dirname "$0")/lib.sh"

C="$TOP/tests/corpus"
command -v preport > /dev/null 2>&1 || fail "preport is not built"

# expect CODE PATTERN ARGS...: preport ARGS exits CODE and says PATTERN on stderr.
expect() {
	code=$1 pat=$2
	shift 2
	set +e
	preport "$@" > o.txt 2> e.txt
	rc=$?
	set -e
	[ "$rc" = "$code" ] || { cat e.txt >&2; fail "preport $*: exit $rc, expected $code"; }
	grep -q -- "$pat" e.txt || { cat e.txt >&2; fail "preport $*: message lacks '$pat'"; }
	[ "$(wc -l < e.txt)" -le 2 ] || { cat e.txt >&2; fail "preport $*: more than one message"; }
	echo "ok: preport $* -> $rc: $(head -n 1 e.txt)"
}

preport --help > help.txt || fail "--help exit $?"
grep -q "Exit status: 0 success, 1 the file is damaged" help.txt || fail "--help does not document the exit status"
preport --version | grep -q '^preport [0-9]' || fail "--version"

expect 3 "cannot open /nonexistent/perf.data: no such file" -i /nonexistent/perf.data
(cd "$T/" && mkdir -p empty && cd empty && expect 3 "cannot open perf.data: no such file")
seq 1 200 > notperf.data
{ printf 'XXXXXXXX'; head -c 400 /dev/urandom; } > random.data
expect 3 "not a perf.data file" -i notperf.data
expect 3 "not a perf.data file" -i random.data
: > empty.data
expect 3 "too small" -i empty.data
mkdir -p dir.data
expect 3 "is a directory" -i dir.data
expect 2 "invalid sort keys 'bogus'" --sort bogus -i "$C/clean.data"
expect 2 "invalid call graph option 'sideways'" -g sideways -i "$C/clean.data"
expect 2 "unrecognized option '--frobnicate'" --frobnicate
expect 2 "Try 'preport --help'" --frobnicate
expect 2 "invalid job count '0'" -j 0
expect 2 "invalid job count 'many'" -j many
expect 2 "invalid list 'x' for --pid" --pid x
expect 2 "invalid list '1,,2' for --tid" --tid 1,,2
expect 2 "invalid list '-1' for --cpu" --cpu -1
expect 2 "invalid --max-stack '0'" --max-stack 0
expect 2 "unexpected argument 'perf.data'" perf.data
expect 2 "requires an argument" -i
expect 3 "cannot write the flame graph to /nonexistent/x.svg" -i "$C/clean.data" --flamegraph /nonexistent/x.svg
expect 3 "cannot repair .* into /nonexistent/x.data" -i "$C/clean.data" --repair /nonexistent/x.data
if [ -w /dev/full ]; then
	set +e
	preport -i "$C/clean.data" > /dev/full 2> e.txt
	rc=$?
	set -e
	assert_eq "$rc" 3 "exit status when stdout is full"
	grep -q "cannot write the report" e.txt || { cat e.txt >&2; fail "no message when stdout is full"; }
	echo "ok: preport > /dev/full -> 3: $(head -n 1 e.txt)"
fi

# The corpus, through every output.
n=0
for f in "$C"/*; do
	name=$(basename "$f")
	case $name in EXPECT|*.sh) continue ;; esac
	want=$(awk -v n="$name" '$1 == n { print $2 }' "$C/EXPECT")
	case $want in clean) code=0 ;; damaged|undecodable) code=1 ;; refused) code=3 ;; *) code=any ;; esac
	for args in "" "--no-children -g caller" "--stats" "--folded" "--flamegraph $T/c.svg" \
		"--header --sort pid,cpu" "--force" "--repair $T/c.data"; do
		set +e
		# shellcheck disable=SC2086
		preport -i "$f" $args > o.txt 2> e.txt
		rc=$?
		set -e
		[ "$rc" -lt 128 ] || fail "$name ($args): killed by signal $((rc - 128))"
		if [ "$args" = "--no-children -g caller" ] && [ "$rc" = 2 ] &&
		   grep -q "^preport: Selected -g or --branch-history\.$" e.txt; then
			: # a file without call chains: -g refused, as perf refuses it
		elif [ "$args" = "--force" ] && [ "$code" = 1 ]; then
			assert_eq "$rc" 0 "$name --force exit status"
		elif [ "${args#--repair}" != "$args" ]; then
			case $rc in 0|1|3) ;; *) fail "$name --repair: exit $rc" ;; esac
		elif [ "$code" = any ]; then
			case $rc in 0|1|3) ;; *) fail "$name ($args): exit $rc, expected 0, 1 or 3" ;; esac
		else
			assert_eq "$rc" "$code" "$name ($args) exit status"
		fi
		# a failure says why, in one line per problem, prefixed
		if [ "$rc" -ne 0 ]; then
			grep -q "^preport: " e.txt || { cat e.txt >&2; fail "$name ($args): exit $rc without a message"; }
		fi
	done
	n=$((n + 1))
done
assert_ge "$n" 20 "corpus files replayed"
echo "ok: $n corpus files through 8 outputs each"
