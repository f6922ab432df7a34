#!/bin/sh
# The C functions longer than LIMIT lines (default 100), from the first line of the signature to
# the closing brace, longest first, then their count. Kernel style makes this a text job: a
# function's braces sit alone in column 0 and its signature starts in column 0.
# Usage: sh tests/funclen.sh [LIMIT] [DIR...]   (default: src ringbuf unwind)
limit=${1:-100}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- src ringbuf unwind
find "$@" -name '*.c' | sort | xargs awk -v limit="$limit" '
	FNR == 1 { sig = 0; start = 0 }
	/^[A-Za-z_]/ && !/^(static |const )*[A-Za-z_][A-Za-z_0-9 ]*\[?\]? *=/ { if (!start) sig = FNR; name = $0 }
	/^\{/ { if (!start) { start = sig; fn = signame } }
	/^[A-Za-z_]/ { if (!start) signame = $0 }
	/^\}/ && start {
		n = FNR - start + 1
		if (n > limit) {
			match(fn, /[A-Za-z_0-9]+ *\(/)
			printf "%5d %s %s\n", n, FILENAME, substr(fn, RSTART, RLENGTH - 1)
		}
		start = 0
	}' | sort -rn > "${TMPDIR:-/tmp}/funclen.$$"
cat "${TMPDIR:-/tmp}/funclen.$$"
echo "$(wc -l < "${TMPDIR:-/tmp}/funclen.$$") functions over $limit lines"
rm -f "${TMPDIR:-/tmp}/funclen.$$"
