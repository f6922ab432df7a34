#!/bin/sh
# The include directions between the layers of the tree (README, Layout):
#     lib <- perf <- {ringbuf, unwind} <- {record, report} <- daemon <- cmd
# A file may include headers of its own layer and of the layers below it, never above, and
# ringbuf/unwind and record/report (record/lossless is part of record) not each other. Headers
# are included by their path from the top or from src/ ("perf/reader.h"), so the path names the
# layer; a project header included without one is refused too. Also checked: the Makefile's
# include roots are -I. and -Isrc only, so no header is visible by its bare name.
. "$(dirname "$0")/lib.sh"
cd "$TOP"

rank() {
	case $1 in
	lib) echo 0 ;; perf) echo 1 ;; ringbuf|unwind) echo 2 ;; record|report) echo 3 ;;
	daemon) echo 4 ;; cmd) echo 5 ;; *) echo -1 ;;
	esac
}

# the layer of a path: src/LAYER/..., or ringbuf/..., unwind/...
layer_of() {
	case $1 in
	src/*) l=${1#src/}; echo "${l%%/*}" ;;
	*) echo "${1%%/*}" ;;
	esac
}

bad=0 n=0
for f in $(find -H src ringbuf unwind -name '*.[ch]' | sort); do
	from=$(layer_of "$f")
	rf=$(rank "$from")
	[ "$rf" -ge 0 ] || { echo "$f: in no layer"; bad=$((bad + 1)); continue; }
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		n=$((n + 1))
		case $inc in
		*.pb-c.h) continue ;;	# generated into build/gen, from the same folder's .proto
		*/*) ;;
		*) echo "$f: includes \"$inc\" without its layer's path"; bad=$((bad + 1)); continue ;;
		esac
		to=${inc%%/*}
		rt=$(rank "$to")
		if [ "$rt" -lt 0 ]; then
			echo "$f: includes \"$inc\", in no layer"; bad=$((bad + 1))
		elif [ "$to" != "$from" ] && [ "$rt" -ge "$rf" ]; then
			echo "$f ($from) includes \"$inc\" ($to): upward or sideways"; bad=$((bad + 1))
		fi
	done
done
assert_ge "$n" 100 "includes checked"

# only the two include roots
roots=$(grep -o -- '-I[^ ]*' Makefile | grep -v -- '-I\$' | sort -u | tr '\n' ' ')
[ "$roots" = "-I. -Isrc " ] || { echo "Makefile include roots: $roots"; bad=$((bad + 1)); }

[ "$bad" -eq 0 ] || fail "$bad include(s) against the layering"
echo "ok: $n includes follow lib <- perf <- {ringbuf, unwind} <- {record, report} <- daemon <- cmd"
