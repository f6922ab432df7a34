#!/bin/sh
# Makes BUILD/top (BUILD is the sanitized build directory, e.g. build-san): a tree of symbolic
# links to the source tree in which precord, preport and precordd are the sanitized programs and
# build/ is BUILD itself (its tools, unit runner, workloads and fuzz targets), so that the
# tests, which use $PRECORD_TOP/precord, $PRECORD_TOP/build/tools, ./build/check_runner and the
# programs on PATH, run the sanitized build without knowing it. Usage: tests/sanitize-top.sh BUILD
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)
b=${1:?usage: tests/sanitize-top.sh BUILD}
top="$src/$b/top"
rm -rf "$top"
mkdir -p "$top"
for f in "$src"/* "$src"/.ci; do
	n=$(basename "$f")
	case $n in
	build|"$b"|precord|preport|precordd) continue ;;
	esac
	[ -e "$f" ] && ln -s "$f" "$top/$n"
done
for p in precord preport precordd; do
	ln -s "$src/$b/$p" "$top/$p"
done
ln -s "$src/$b" "$top/build"
