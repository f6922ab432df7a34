#!/bin/sh
# A Go program: its file has .debug_frame but no .eh_frame (no call frame information for
# libunwind's remote tables), and Go keeps frame pointers. preport unwinds its DWARF samples
# through the frame pointers, up to runtime.main (perf 6.1 stops after the first frame); its
# self table is perf report's, text for text, on perf's recording and on precord's.
. "$(dirname "$0")/lib.sh"

command -v go > /dev/null 2>&1 || skip "go is not installed (golang-go)"
command -v perf > /dev/null 2>&1 || skip "perf is not installed"

cat > main.go << 'SRC'
package main

import (
	"crypto/sha256"
	"fmt"
	"sort"
)

//go:noinline
func work(n int) int {
	s := make([]int, 0, n)
	for i := 0; i < n; i++ {
		s = append(s, (i*7919)%n)
	}
	sort.Ints(s)
	return s[n/2]
}

func main() {
	t := 0
	for r := 0; r < 12; r++ {
		t += work(200000)
		h := sha256.Sum256([]byte(fmt.Sprint(t)))
		t += int(h[0])
	}
	fmt.Println(t)
}
SRC
HOME=$T GOCACHE=$T/gocache GOPATH=$T/gopath go build -o gop main.go || fail "go build failed"
readelf -S gop | grep -q '\.eh_frame' && skip "this Go toolchain writes .eh_frame"
perf record -q -e cpu-clock -F 2000 --call-graph dwarf -o perf.data ./gop > /dev/null 2>&1 ||
	fail "perf record failed"
precord -q -e cpu-clock -F 2000 -o pre.data -- ./gop > /dev/null || fail "precord failed"

for f in perf.data pre.data; do
	preport -i $f --folded --comm gop > gop.folded || fail "preport --folded exit $?"
	# samples in main.work's sort (user code): their chains reach runtime.main
	all=$(awk '/;main\.work;/ { n += $NF } END { print n + 0 }' gop.folded)
	deep=$(awk '/^gop;runtime\.goexit[^;]*;runtime\.main;main\.main;main\.work;/ { n += $NF } END { print n + 0 }' gop.folded)
	assert_ge "$all" 200 "$f: samples under main.work"
	assert_ge $((deep * 100)) $((all * 98)) "$f: samples under main.work whose chain begins at runtime.goexit (of $all)"
	same_table "Go" $f --no-children -g none --sort dso,sym
	echo "ok: $f: $deep of $all samples under main.work unwound from runtime.goexit"
done
