# systemd/precordd.service: `systemd-analyze verify` passes with @SBINDIR@ replaced by where the
# built precordd is (as make install does) and the man pages it names on MANPATH; it carries the
# hardening the service relies on; the sample configuration is valid and documents every key.
. "$(dirname "$0")/lib.sh"
command -v systemd-analyze > /dev/null || skip "systemd-analyze is not installed (apt-get install systemd)"
[ -x "$TOP/precordd" ] || skip "precordd is not built"

sed "s|@SBINDIR@|$TOP|g" "$TOP/systemd/precordd.service" > precordd.service
mkdir -p man/man5 man/man8
cp "$TOP/man/precordd.8" man/man8/
cp "$TOP/man/precordd.conf.5" man/man5/
MANPATH="$T/man" systemd-analyze verify precordd.service > verify.out 2>&1 || { cat verify.out; fail "systemd-analyze verify"; }
[ ! -s verify.out ] || { cat verify.out; fail "systemd-analyze verify printed warnings"; }

u="$TOP/systemd/precordd.service"
for kv in Type=notify NoNewPrivileges=yes ProtectSystem=strict StateDirectory=precord \
	ProtectHome=read-only PrivateTmp=yes RuntimeDirectory=precord ExecReload=; do
	grep -q "^$kv" "$u" || fail "the unit lacks $kv"
done
grep -q "^SystemCallFilter=@system-service perf_event_open" "$u" || fail "SystemCallFilter"
for cap in CAP_PERFMON CAP_SYS_PTRACE CAP_IPC_LOCK; do
	grep -q "^AmbientCapabilities=.*$cap" "$u" || fail "AmbientCapabilities lacks $cap"
	grep -q "^CapabilityBoundingSet=.*$cap" "$u" || fail "CapabilityBoundingSet lacks $cap"
done
n=$(sed -n 's/^LimitNOFILE=//p' "$u")
assert_ge "${n:-0}" 4096 "LimitNOFILE"

# the sample config: valid (with a group that exists here), every key in it and in the man page
sed 's/^#socket_group = precord/socket_group = root/' "$TOP/systemd/precordd.conf" > s.conf
"$TOP/precordd" --check --config s.conf > /dev/null || fail "the sample configuration is not valid"
for k in continuous event frequency call_graph unwind all_cgroups target cpus buffer_size compression output_dir \
	rotate_size rotate_interval max_total_size max_age socket socket_group \
	control_max_duration control_max_sessions pprof push_url push_name push_labels push_timeout \
	push_spool_size; do
	grep -q "^#* *$k = " "$TOP/systemd/precordd.conf" || fail "the sample config does not show $k"
	grep -q "^\.B $k\$\|^\.BR $k " "$TOP/man/precordd.conf.5" || fail "precordd.conf(5) does not document $k"
done
echo ok
