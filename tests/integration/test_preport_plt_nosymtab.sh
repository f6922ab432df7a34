#!/bin/sh
# PLT entries of a binary without .symtab (/usr/bin/dash: its .dynsym defines only data
# objects): perf names them NAME@plt from .rela.plt and .dynsym (dso__synthesize_plt_symbols,
# which runs since perf loads the objects as symbols); preport must too, in the self rows and in
# the Children rows of a DWARF recording (no row of an absolute address in their place).
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
[ -x /usr/bin/dash ] || skip "no /usr/bin/dash"
! readelf -S /usr/bin/dash 2> /dev/null | grep -q '\.symtab' || skip "this dash has a .symtab"

perf record -q -e cpu-clock --call-graph dwarf -o dash.data -- /usr/bin/dash -c \
	'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); printf "%s" x > /dev/null; done' > /dev/null 2>&1 ||
	fail "perf record dash failed"
for view in "--no-children" "--children"; do
	perf report -i dash.data --stdio $view -g none --sort dso,sym 2> /dev/null |
		awk '$0 ~ /%/ && / dash / && /@plt/' > perf.plt
	preport -i dash.data $view -g none --sort dso,sym 2> /dev/null |
		awk '$0 ~ /%/ && / dash / && /@plt/' > preport.plt
	[ -s perf.plt ] || fail "perf report $view shows no PLT row of dash"
	cmp -s perf.plt preport.plt || { diff perf.plt preport.plt; fail "$view: dash's PLT rows differ from perf's"; }
	echo "ok: $view: $(wc -l < perf.plt) PLT rows of dash as perf's"
done
