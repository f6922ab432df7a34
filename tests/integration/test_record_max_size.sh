# --max-size (perf's option, but a hard limit): once the file's data would pass SIZE, what
# the rings still bring is counted lost instead of written, and the recording stops, ending
# the command as at Ctrl-C. The data (header's data.size, the closing LOST records aside) never
# passes SIZE, compressed or not; the summary, perf and preport agree on the samples in the file
# and the samples lost; a limit never reached changes nothing; a bad SIZE is refused, and so is
# one that the description of the running processes passes alone.
. "$(dirname "$0")/lib.sh"

# data_size FILE: the header's data.size (u64 at offset 48)
data_size() { od -An -t u8 -j 48 -N 8 "$1" | tr -d ' '; }

# check WHAT LIMIT: a run that reached LIMIT bytes
check() {
	what=$1 limit=$2
	assert_eq "$rc" 143 "$what: exit status (the command ended by SIGTERM)"
	grep -q "^\[ precord: the file reached --max-size ([0-9.]* [KM]iB): recording stopped \]" rec.err ||
		{ cat rec.err; fail "$what: no message saying the limit stopped the recording"; }
	! grep -q "cannot write" rec.err || { cat rec.err; fail "$what: the limit was told as a write failure"; }
	samples=$(sed -n 's/^\[ precord: [0-9.]* s, \([0-9]*\) samples.*/\1/p' rec.err)
	lost_smp=$(sed -n 's/^\[ precord: LOST [0-9]* records, \([0-9]*\) of them samples (.*), that came past --max-size in m.data \]/\1/p' rec.err)
	[ -n "$samples" ] && [ -n "$lost_smp" ] || { cat rec.err; fail "$what: no summary of the samples lost"; }
	assert_ge "$lost_smp" 1 "$what: samples past the limit"
	ds=$(data_size m.data)
	# what closes the file after the data: one LOST, one LOST_SAMPLES, one LOST_SAMPLES per
	# event and CPU (a few hundred bytes)
	assert_le "$ds" $((limit + 4096)) "$what: data in the file"
	assert_ge "$ds" $((limit / 2)) "$what: data in the file (filled towards the limit)"
	lost_agree "$what" m.data "$samples" "$lost_smp"
	echo "$what: data $ds of $limit bytes, $in_file samples in the file, $lost_smp past the limit"
}

# 1. Not compressed: two spinning threads at 1 kHz with 8K stacks bring ~16 MB/s; 1 MiB
# is reached within the first tenth of a second of CPU time, however busy the machine.
rc=0; precord --no-compress -F 1000 --max-size 1M -o m.data -- "$W/spin_threads" 3600 > /dev/null 2> rec.err || rc=$?
check "--no-compress" 1048576

# 2. Compressed (zstd frames are appended whole: the limit holds for them too)
rc=0; precord -F 1000 --max-size 64K -o m.data -- "$W/spin_threads" 3600 > /dev/null 2> rec.err || rc=$?
check "compressed" 65536

# 3. A limit never reached: the command's own status, nothing lost
rc=0; precord --max-size 1G -o m.data -- "$W/spin_threads" 0.2 > /dev/null 2> rec.err || rc=$?
assert_eq "$rc" 0 "a limit not reached: exit status"
grep -q "^\[ precord: 0 lost \]" rec.err || { cat rec.err; fail "a limit not reached: losses"; }
! grep -q "max-size" rec.err || { cat rec.err; fail "a limit not reached: told as reached"; }

# 4. Bad sizes: exit 2, the option and the remedy named, nothing run
for bad in 1K abc 0 -5M; do
	rc=0; precord --max-size "$bad" -o bad.data -- touch ran > /dev/null 2> bad.err || rc=$?
	assert_eq "$rc" 2 "--max-size $bad: exit status"
	grep -q "invalid size '$bad' for --max-size: expected at least 4K" bad.err || { cat bad.err; fail "--max-size $bad: message"; }
	[ ! -e ran ] || fail "--max-size $bad: the command ran"
done
# 5. A limit that the description of what runs passes already (-a): refused with the remedy
rc=0; precord --max-size 4K -a -o small.data -- true > /dev/null 2> small.err || rc=$?
assert_eq "$rc" 125 "-a with --max-size 4K: exit status"
grep -q "the description of the running processes alone passes the size limit of 4096 bytes: give a larger --max-size" small.err ||
	{ cat small.err; fail "-a with --max-size 4K: message"; }
echo "ok"
