#!/bin/sh
# Writes the bad-input corpus for perf_reader into this directory: a small hand-made perf.data
# (one attr, COMM + SAMPLE + FINISHED_ROUND records, a HOSTNAME feature) and damaged variants of
# it, and EXPECT, which says for each file whether the reader must refuse it, report damage, or
# read it clean. The files are committed; rerun this only to change them. Needs zstd(1).
set -eu
cd "$(dirname "$0")"

# le VALUE BYTES: VALUE little-endian on stdout (shell arithmetic is 64-bit signed, so -1 gives
# all ones).
le() {
	_v=$1 _n=$2 _o=''
	while [ "$_n" -gt 0 ]; do
		_o="$_o$(printf '\\%03o' $((_v & 255)))"
		_v=$((_v >> 8))
		_n=$((_n - 1))
	done
	printf "$_o"
}
zeros() { head -c "$1" /dev/zero; }

SAMPLE_TYPE=$(( (1 << 16) | 1 | 2 | 4 | 256 )) # IDENTIFIER IP TID TIME PERIOD
ID=100

# header MAGIC_SIZE ATTR_SIZE ATTRS_OFF ATTRS_SIZE DATA_OFF DATA_SIZE FEATURES
header() {
	printf 'PERFILE2'
	le "$1" 8; le "$2" 8; le "$3" 8; le "$4" 8; le "$5" 8; le "$6" 8
	zeros 16
	le "$7" 8; zeros 24
}

# attr SAMPLE_TYPE SIZE_FIELD: 128 bytes of perf_event_attr (software cpu-clock)
attr() {
	le 1 4; le "$2" 4; le 0 8; le 1000000 8; le "$1" 8; le 0 8
	le $((1 << 18)) 8 # sample_id_all
	zeros 80
}

comm() { # TID TIME
	le 3 4; le 0 2; le 56 2
	le "$1" 4; le "$1" 4; printf 'corpus'; zeros 10
	le "$1" 4; le "$1" 4; le "$2" 8; le $ID 8
}

sample() { # IP TID TIME [SIZE]
	le 9 4; le 2 2; le "${4:-48}" 2
	le $ID 8; le "$1" 8; le "$2" 4; le "$2" 4; le "$3" 8; le 1000000 8
}

round() { le 68 4; le 0 2; le 8 2; }

records() {
	comm 7 0
	sample $((0x401000)) 7 10
	sample $((0x401010)) 7 20
	sample $((0x401020)) 7 30
	round
	sample $((0x401030)) 7 40
}
DATA_SIZE=$((56 + 48 * 4 + 8))

hostname_feature() { # INDEX_OFFSET
	le $(($1 + 16)) 8; le 68 8
	le 64 4; printf 'corpus'; zeros 58
}

# base NAME [DATA_OFF [DATA_SIZE [ATTR_SIZE [HEADER_SIZE]]]]: the whole file with overrides
base() {
	{
		header "${5:-104}" "${4:-144}" 104 144 "${2:-256}" "${3:-$DATA_SIZE}" 8
		attr $SAMPLE_TYPE 128
		le 248 8; le 8 8
		le $ID 8
		records
		hostname_feature $((256 + DATA_SIZE))
	} > "$1"
}

# patch FILE OFFSET BYTES...: overwrite bytes in place
patch() {
	f=$1 off=$2
	shift 2
	printf "$*" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

exec 3> EXPECT
echo "# file  refused|damaged|undecodable|clean  (written by make-corpus.sh)" >&3
expect() { echo "$1 $2" >&3; }

base clean.data; expect clean.data clean

cp clean.data bad-magic.data; patch bad-magic.data 0 'PERFILE3'; expect bad-magic.data refused
base pipe-header.data 256 "$DATA_SIZE" 144 16; expect pipe-header.data refused
base header-96.data 256 "$DATA_SIZE" 144 96; expect header-96.data refused
base attr-size-0.data 256 "$DATA_SIZE" 0; expect attr-size-0.data refused
base attr-size-huge.data 256 "$DATA_SIZE" -1; expect attr-size-huge.data refused
cp clean.data attrs-outside.data; patch attrs-outside.data 24 '\377\377\377\377\377\377\377\177'
expect attrs-outside.data refused
cp clean.data ids-outside.data; patch ids-outside.data 232 '\000\000\000\001'
expect ids-outside.data refused
base data-offset-outside.data 1000000; expect data-offset-outside.data refused
head -c 50 clean.data > cut-header.data; expect cut-header.data refused
head -c 200 clean.data > cut-attrs.data; expect cut-attrs.data refused

# Second record (first SAMPLE, at 312): size 0, odd, past the end.
cp clean.data rec-size-0.data; patch rec-size-0.data 318 '\000\000'; expect rec-size-0.data damaged
cp clean.data rec-size-odd.data; patch rec-size-odd.data 318 '\064\000'
expect rec-size-odd.data damaged
cp clean.data rec-size-huge.data; patch rec-size-huge.data 318 '\370\377'
expect rec-size-huge.data damaged
head -c 400 clean.data > cut-mid-record.data; expect cut-mid-record.data damaged
base data-size-huge.data 256 -1; expect data-size-huge.data damaged

# Killed recorder: data.size 0 and no feature sections; then with a half-written record.
base killed.data 256 0; head -c $((256 + DATA_SIZE)) killed.data > k.tmp; mv k.tmp killed.data
expect killed.data clean
head -c $((256 + DATA_SIZE - 20)) killed.data > killed-partial.data
expect killed-partial.data damaged

# Features: section outside the file; string length absurd.
cp clean.data feature-outside.data
patch feature-outside.data $((256 + DATA_SIZE)) '\000\000\000\000\000\001'
expect feature-outside.data damaged
cp clean.data feature-string-huge.data
patch feature-string-huge.data $((256 + DATA_SIZE + 16)) '\377\377\377\377'
expect feature-string-huge.data damaged

# Compressed records: a good one (a zstd frame holding two samples, then a plain round), one
# with a corrupted payload, one whose frame holds a record and a half.
{ sample 1 7 50; sample 2 7 60; } | zstd -q -c > z.tmp
zlen=$(wc -c < z.tmp)
compressed() { # FILE_WITH_PAYLOAD
	zn=$(wc -c < "$1")
	le 81 4; le 0 2; le $((8 + zn)) 2; cat "$1"
}
build_z() { # NAME PAYLOAD_FILE
	dsize=$((8 + $(wc -c < "$2") + 8))
	{
		header 104 144 104 144 256 "$dsize" 0
		attr $SAMPLE_TYPE 128
		le 248 8; le 8 8
		le $ID 8
		compressed "$2"
		round
	} > "$1"
}
build_z compressed.data z.tmp; expect compressed.data clean
cp z.tmp zbad.tmp
printf '\377\377\377\377\377\377\377\377\377\377\377\377' | dd of=zbad.tmp bs=1 seek=8 conv=notrunc status=none
build_z compressed-garbage.data zbad.tmp; expect compressed-garbage.data damaged
{ sample 1 7 50; sample 2 7 60; } | head -c 70 | zstd -q -c > zhalf.tmp
build_z compressed-half.data zhalf.tmp; expect compressed-half.data damaged
rm -f z.tmp zbad.tmp zhalf.tmp

# A sample whose callchain claims 2^60 entries: structurally whole, but it does not decode:
# named, exit 1 (preport), while the reader finds no damage in the file.
{
	header 104 144 104 144 256 56 0
	attr $((SAMPLE_TYPE | 32)) 128
	le 248 8; le 8 8
	le $ID 8
	le 9 4; le 2 2; le 56 2
	le $ID 8; le 1 8; le 7 4; le 7 4; le 10 8; le 1 8; le $((1 << 60)) 8
} > callchain-huge.data
expect callchain-huge.data undecodable

# attr.size 136 (newer kernel headers) and 64 (the first published attr).
{
	header 104 152 104 152 264 48 0
	attr $SAMPLE_TYPE 136; zeros 8
	le 256 8; le 8 8
	le $ID 8
	sample 1 7 10
} > attr-136.data
expect attr-136.data clean
{
	header 104 80 104 80 192 48 0
	attr $SAMPLE_TYPE 64 | head -c 64
	le 184 8; le 8 8
	le $ID 8
	sample 1 7 10
} > attr-64.data
expect attr-64.data clean

# precord's trailer after the features (PERF_TRAILER_MAGIC): a ring-order claim (tag 251:
# version 1, one CPU, 5000 ns, CPU 0); then the trailer's size reaching into the features, and
# its entry longer than the trailer. Neither is damage to the data: the claim is just absent.
trailer() { # SIZE_FIELD ENTRY_LEN
	le 251 4; le "$2" 4; le 1 4; le 1 4; le 5000 8; le 0 4; zeros 4
	le "$1" 8; printf 'PRECTRL1'
}
{ cat clean.data; trailer 32 20; } > trailer.data; expect trailer.data clean
{ cat clean.data; trailer 200 20; } > trailer-size-huge.data; expect trailer-size-huge.data clean
{ cat clean.data; trailer 32 4000; } > trailer-entry-huge.data; expect trailer-entry-huge.data clean
