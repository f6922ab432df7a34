#!/bin/sh
# --symfs and --kallsyms, as perf report's: a recording read where its files are not (another
# machine's), with a copy of them under a directory and a copy of its kallsyms. A program and
# its library are recorded (by perf and by precord) from a directory that then moves under the
# symfs root; the build-id cache is out of the way (HOME), so without --symfs their samples are
# addresses and their chains stop at the first frame no file explains (perf's, not a guess
# through %rbp), and with it the names and call graphs are perf's, text for text. A library
# replaced by another build is not a file gone: chains through it go on, as perf's.
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
command -v cc > /dev/null 2>&1 || skip "cc is missing"

leaf_sources
mkdir -p app home
cc -O1 -g -fPIC -shared -o app/libt.so lib.c || fail "cc lib.c failed"
cc -O1 -g -o app/prog prog.c -L app -lt -Wl,-rpath,"$T/app" || fail "cc prog.c failed"
HOME=$T/home perf record -q -e cpu-clock --call-graph dwarf -o perf.data ./app/prog > /dev/null 2>&1 ||
	fail "perf record failed"
HOME=$T/home precord -q -e cpu-clock -o precord.data ./app/prog > /dev/null 2>&1 || fail "precord failed"
# the recording machine's files, under root/; nothing where the recording names them
rm -rf home/.debug
mkdir -p "root$T"
mv app "root$T/"

# user_rows ARGS...: perf's and preport's reports without the kernel's rows (perf looks for
# kallsyms under --symfs too; preport takes the running kernel's when it made the recording)
user_rows() {
	_f=$1
	shift
	HOME=$T/home perf report -i "$_f" --stdio "$@" 2> /dev/null | grep -vE '^$|^#|\[k\]' > perf.t
	HOME=$T/home preport -i "$_f" "$@" | grep -vE '^$|^#|\[k\]' > pre.t || fail "preport $* exit $?"
	cmp -s perf.t pre.t || { diff perf.t pre.t | head -n 20 >&2; fail "$_f: $* differs from perf's"; }
}
for f in perf.data precord.data; do
	# without the files: addresses, and chains of the sampled address alone
	user_rows $f --no-children -g caller
	grep -q 'main_spin\|lib_leaf' pre.t && fail "$f: names without the files"
	grep -qE '^ +[0-9.]+% +prog +prog +\[\.\] 0x' pre.t || fail "$f: no unresolved row of prog"
	n=$(awk '/^ +[0-9.]+%/ { r = 1; next } r && /---/ { c++ } END { print c + 0 }' pre.t)
	[ "$(grep -c -- '---0x' pre.t)" -eq "$n" ] || fail "$f: a chain begins with a name"
	# with them: perf's names and graphs (with children only on perf's recording: on
	# precord's, two branches of equal share may come in the other order, preport.1)
	views="--no-children -g caller|--no-children -g callee"
	[ $f = perf.data ] && views="$views|--children -g caller --no-inline"
	_IFS=$IFS
	IFS='|'
	for args in $views; do
		IFS=$_IFS
		# shellcheck disable=SC2086
		user_rows $f --symfs "$T/root" $args
	done
	IFS=$_IFS
	grep -q 'main_spin' pre.t && grep -q 'lib_leaf' pre.t || fail "$f: --symfs found no name"
	echo "ok: $f: without the files, addresses and the sampled address alone; with --symfs, perf's names and graphs"
done

# A library another build has replaced since (its build id differs): the chains through it go
# on, as perf's do (only a file that cannot be read at all stops them).
mkdir app
cp "root$T/app/prog" app/
(echo 'int pad(int x) { return x * 3 + 1; }'; cat lib.c) > lib2.c
cc -O1 -g -fPIC -shared -o app/libt.so lib2.c || fail "cc lib2.c failed"
for f in perf.data precord.data; do
	user_rows $f --no-children -g caller
	grep -qE '^ +[0-9.]+% +prog +libt\.so +\[\.\] 0x' pre.t || fail "$f: the replaced library's rows have names"
	awk '/libt\.so/ { r = 1; next } r && /---/ { print; exit }' pre.t | grep -q -- '---_start' ||
		fail "$f: the chain of the replaced library's row stops short of _start"
done
echo "ok: a replaced library: its rows are addresses, their chains go on to _start, as perf's"

# --kallsyms: the kernel's names from the file given (here a copy with every function renamed)
sed 's/^\([0-9a-f]* [tTwW] \)/\1k_/' /proc/kallsyms > renamed.kallsyms
cp /proc/kallsyms copy.kallsyms
precord -q -e cpu-clock -o dd.data -- dd if=/dev/zero of=/dev/null bs=256 count=200000 > /dev/null 2>&1 ||
	fail "precord dd failed"
preport -i dd.data --no-children -g none -s sym > plain.t
preport -i dd.data --no-children -g none -s sym --kallsyms copy.kallsyms > copy.t
cmp -s plain.t copy.t || { diff plain.t copy.t | head >&2; fail "--kallsyms with a copy of /proc/kallsyms differs"; }
preport -i dd.data --no-children -g none -s sym --kallsyms renamed.kallsyms > renamed.t
k=$(grep -c '\[k\] ' plain.t)
assert_ge "$k" 3 "kernel rows of dd"
assert_eq "$(grep -c '\[k\] k_' renamed.t)" "$k" "kernel rows named from the renamed kallsyms"
echo "ok: --kallsyms: $k kernel rows named from the file given"

# bad paths: named, exit status 2, nothing read
for bad in "--symfs $T/none" "--symfs $T/renamed.t" "--kallsyms $T/none" "--kallsyms /dev/null"; do
	# shellcheck disable=SC2086
	preport -i dd.data $bad > /dev/null 2> err.txt && fail "$bad was accepted"
	[ $? -eq 2 ] || fail "$bad: exit status is not 2"
	grep -q -- "invalid ${bad%% *}" err.txt ||
		{ cat err.txt; fail "$bad: the message does not name the option"; }
done
echo ok
