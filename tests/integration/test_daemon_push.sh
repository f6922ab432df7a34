# precordd's pprof export and push to a Pyroscope ingest API. A strict receiver (tools/
# ingest_recv, on 127.0.0.1) first shows that it rejects malformed requests. Then precordd, with
# pprof = yes and push_url pointing at the receiver's port while nothing listens there, closes
# two files of a program run in a service cgroup of its own: both profiles are written beside
# their files and wait in the spool. Once the receiver listens, both arrive (nothing lost),
# byte for byte the profiles kept, named APP{host=...,labels} with from/until the files' span.
# go tool pprof reads every written and pushed profile; its flat shares agree with preport's
# self table on the same file to 0.5 point, and the labels host, unit (the service), comm and
# pid are there.
. "$(dirname "$0")/daemon_lib.sh"

command -v go > /dev/null 2>&1 || skip "go (golang-go) is not installed: go tool pprof reads the profiles"
command -v curl > /dev/null 2>&1 || skip "curl is not installed: it sends the malformed requests"
[ -x "$TOOLS/ingest_recv" ] || skip "ingest_recv is not built (make test-bins)"
[ -x "$W/unw_chain" ] || fail "the unw_chain workload is missing (make test-bins)"
export HOME="$T/home" GOCACHE="$T/gocache" GOPROXY=off GOFLAGS=
mkdir -p "$HOME"
root=$(sed -n 's/^[^ ]* [^ ]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -n 1)
[ -n "$root" ] && [ -d "$root" ] || skip "no cgroup2 mount on this machine"
svc="precord-test-$$.slice/push-$$.service"
mkdir -p "$root/$svc" || skip "cannot make a cgroup under $root"
RPID=
EXTRA_CLEANUP="[ -n \"\$RPID\" ] && kill \$RPID; for p in \$(cat '$root/$svc/cgroup.procs' 2>/dev/null); do kill \$p; echo \$p > '$root/cgroup.procs'; done; rmdir '$root/$svc' '$root/precord-test-$$.slice' 2>/dev/null"

# start_recv [PORT]: the receiver in the background, its files in $T/recv; sets PORT
start_recv() {
	mkdir -p recv
	rm -f recv/port
	"$TOOLS/ingest_recv" "$T/recv" ${1:-} > recv.out 2>&1 &
	RPID=$!
	for _ in $(seq 100); do [ -s recv/port ] && break; sleep 0.05; done
	[ -s recv/port ] || { cat recv.out; fail "ingest_recv did not listen"; }
	PORT=$(cat recv/port)
}
stop_recv() { kill "$RPID"; wait "$RPID" 2> /dev/null || true; RPID=; }

# --- the receiver is strict: each malformed request is answered 4xx and logged as rejected ---
start_recv
gen() { # a small valid gzip'd profile from preport, for the requests below
	# (unw_chain's exit status is its checksum's low bit)
	"$PRECORD" -q -e cpu-clock -F 499 --call-graph fp -o small.data -- sh -c "'$W/unw_chain' 200; exit 0" \
		> /dev/null 2>&1 || fail "precord failed"
	preport -q -i small.data --pprof small.pb.gz || fail "preport --pprof failed"
}
gen
printf 'not gzip' > notgz.bin
printf 'not a profile, but gzip' | gzip > notproto.gz
head -c 20 small.pb.gz > cut.gz
U="http://127.0.0.1:$PORT/ingest"
Q="from=1700000000&until=1700000010&format=pprof"
n=0
reject() { # WHAT EXPECTED_STATUS CURL_ARGS...
	what=$1 want=$2; shift 2
	got=$(curl -s -o /dev/null -w '%{http_code}' "$@") || true
	[ "$got" = "$want" ] || { cat recv/log; fail "receiver: $what: status $got, expected $want"; }
	n=$((n + 1))
}
reject "no name" 400 --data-binary @small.pb.gz "$U?$Q"
reject "from after until" 400 --data-binary @small.pb.gz "$U?name=a&from=1700000010&until=1700000000&format=pprof"
reject "from not a number" 400 --data-binary @small.pb.gz "$U?name=a&from=soon&until=1700000000&format=pprof"
reject "no until" 400 --data-binary @small.pb.gz "$U?name=a&from=1700000000&format=pprof"
reject "format folded" 400 --data-binary @small.pb.gz "$U?name=a&from=1700000000&until=1700000010"
reject "bad name labels" 400 --data-binary @small.pb.gz "$U?name=a%7Bx%7D&$Q"
reject "not gzip" 400 --data-binary @notgz.bin "$U?name=a&$Q"
reject "gzip, not a profile" 400 --data-binary @notproto.gz "$U?name=a&$Q"
reject "cut gzip" 400 --data-binary @cut.gz "$U?name=a&$Q"
reject "form without profile" 400 -F "other=@small.pb.gz" "$U?name=a&$Q"
reject "chunked" 411 -H 'Transfer-Encoding: chunked' --data-binary @small.pb.gz "$U?name=a&$Q"
reject "GET" 405 "$U?name=a&$Q"
reject "other path" 404 --data-binary @small.pb.gz "http://127.0.0.1:$PORT/push?name=a&$Q"
assert_eq "$(grep -c '^rejected' recv/log)" "$n" "requests the receiver logged as rejected"
! grep -q '^ok' recv/log || fail "the receiver accepted a malformed request"
# and it takes the documented forms: the raw body, and the form field "profile"
reject "raw body" 200 --data-binary @small.pb.gz "$U?name=a.b%7Benv%3Dx%7D&$Q&sampleRate=499"
reject "form" 200 -F "profile=@small.pb.gz" "$U?name=a&$Q"
assert_eq "$(grep -c '^ok' recv/log)" 2 "well-formed requests accepted"
echo "ok: the receiver rejects $((n - 2)) malformed requests and takes the 2 documented forms"
stop_recv
rm -rf recv

# --- precordd while nothing listens: profiles written and spooled ---
start_recv
stop_recv # the port is known and closed: connections are refused
conf d.conf socket_group=none rotate_interval=0 pprof=yes "push_url=http://127.0.0.1:$PORT" \
	push_labels=env=test,team=perf push_timeout=5s
"$PRECORDD" --check --config d.conf > check.out 2>&1 || { cat check.out; fail "--check refused the config"; }
start_listener
start_daemon d.conf
wait_ready

# st KEY: the value of KEY in precord ctl status
st() { "$PRECORD" ctl -s "$T/ctl.sock" status | awk -v k="$1" '$1 == k { print $2 }'; }
# wait_st KEY MIN WHAT: until KEY >= MIN (120 s at most: the export runs at nice 19, and a
# push is retried at most a minute after the last failure)
wait_st() {
	i=0
	while [ "$(st "$1")" -lt "$2" ] 2> /dev/null; do
		i=$((i + 1)); [ $i -lt 1200 ] || { "$PRECORD" ctl -s "$T/ctl.sock" status; cat "$T/daemon.log"; fail "$3: $1 < $2 after 120 s"; }
		sleep 0.1
	done
}
closed=""
for k in 1 2; do
	sh -c "echo \$\$ > '$root/$svc/cgroup.procs' || exit 99; '$W/unw_chain' 1000; exit 0" > /dev/null ||
		fail "cannot move into $root/$svc (exit $?)"
	"$PRECORD" ctl -s "$T/ctl.sock" rotate > rot.out || { cat rot.out; fail "ctl rotate exit $?"; }
	closed="$closed $(awk '$1 == "closed" { print $2 }' rot.out)"
	wait_st exported "$k" "profile $k"
	wait_st push_failed "$k" "failed pushes while the server is down"
done
assert_eq "$(st spooled)" 2 "profiles in the spool while the server is down"
# the budget counts each profile once, kept and spooled alike (a hard link), as retention does
want=$(find out -maxdepth 1 -name '*.pb.gz' -printf '%b %s\n' | awk '{ b = $1 * 512; s += b > $2 ? b : $2 } END { print s + 0 }')
assert_ge "$want" 1 "bytes of the kept profiles"
assert_eq "$(st export_bytes)" "$want" "export_bytes (kept profiles and spool, each file once)"
assert_eq "$(st pushed)" 0 "profiles pushed while the server is down"
grep -q "cannot push .* stays in the spool" "$T/daemon.log" || { cat "$T/daemon.log"; fail "no log line about the failed push"; }

# --- the server comes back: everything spooled arrives ---
start_recv "$PORT"
assert_eq "$PORT" "$(cat recv/port)" "receiver port"
wait_st pushed 2 "profiles pushed once the server is back"
assert_eq "$(st spooled)" 0 "profiles left in the spool"
assert_eq "$(st push_rejected)" 0 "profiles the receiver rejected"
assert_eq "$(st spool_dropped)" 0 "profiles dropped from the spool"
stop_daemon TERM
assert_eq "$DRC" 0 "exit status"
! grep -q '^rejected' recv/log || { cat recv/log; fail "the receiver rejected a push"; }
assert_eq "$(grep -c '^ok' recv/log)" 2 "pushes the receiver took"
host=$(hostname | tr -c 'A-Za-z0-9._\n-' '_')
i=0
for f in $closed; do
	i=$((i + 1))
	base=${f%.data}
	kept="out/$base.pb.gz"
	[ -s "$kept" ] || { ls -la out; fail "no profile $kept beside $f"; }
	line=$(sed -n "${i}p" recv/log)
	set -- $line
	assert_eq "$2" "precordd{host=$host,env=test,team=perf}" "name of push $i"
	# from: the time in the file's name; until: when it was closed, not before
	from=$(date -u -d "$(echo "$base" | sed 's/^precord-[0-9]*-\(....\)\(..\)\(..\)T\(..\)\(..\)\(..\)Z$/\1-\2-\3 \4:\5:\6/')" +%s)
	assert_eq "$3" "$from" "from of push $i"
	assert_ge "$4" "$3" "until of push $i"
	cmp -s "$kept" "$6" || fail "push $i is not the profile kept beside $f"
done

# --- go tool pprof reads every profile and agrees with preport on the same file ---
# The service's samples, as percentages of all samples on both sides: preport --cgroup UNIT and
# go tool pprof -tagfocus unit=UNIT (the machine's other processes have frames that neither
# side symbolizes, which each names its own way: 0x... rows, [binary] rows).
unit="push-$$.service"
# Both sides by symbol: preport --no-inline and go tool pprof -noinlines (a location's last
# line, its function). An unsymbolized frame is preport's 0x... row and pprof's <unknown> or
# [binary] (a location in a mapping of that file). They are one bucket in the self shares; in
# the children shares they cannot be compared: preport has a row per address, whose children
# shares count a sample once per unsymbolized address in its stack, pprof one node per file
# (the service's sh, whose frames have no symbols, made 4.97% against 0.71% once).
# pre_rows FILE self|children: "NAME PERCENT" per function, the rows of one name summed
pre_rows() {
	if [ "$2" = self ]; then set -- "$1" --no-children; else set -- "$1" --children; fi
	preport -q -i "$1" "$2" --no-inline -g none --sort sym --cgroup "$unit" |
		awk '/^ +[0-9.]+%/ { p = $1 + 0; sub(/^ +[0-9.]+% +([0-9.]+% +)?\[.\] /, ""); sub(/ +$/, ""); if ($0 ~ /^0x[0-9a-f]+$/) $0 = "<unknown>"; s[$0] += p }
		     END { for (n in s) printf "%s\t%.2f\n", n, s[n] }' | LC_ALL=C sort
}
# pprof_rows PROFILE flat|cum: the same from go tool pprof -top
pprof_rows() {
	go tool pprof -top -noinlines -nodecount=100000 -nodefraction=0 -edgefraction=0 \
		-tagfocus="unit=^$(echo "$unit" | sed 's/\./\\./g')\$" "$1" 2> pprof.err |
		awk -v col="$([ "$2" = flat ] && echo 2 || echo 5)" '
		     f && NF >= 6 { p = $col + 0; n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", n)
				    sub(/ +$/, "", n); if (n ~ /^\[.*\]$/) n = "<unknown>"; s[n] += p }
		     /flat%/ { f = 1 }
		     END { for (n in s) printf "%s\t%.2f\n", n, s[n] }' | LC_ALL=C sort
}
# agree PROFILE FILE self|children: every row above 0.1% on either side within 0.5 point on the
# other; prints the number of rows compared
agree() {
	pre_rows "$2" "$3" > pre.tsv
	pprof_rows "$1" "$([ "$3" = self ] && echo flat || echo cum)" > pp.tsv
	[ -s pre.tsv ] || fail "preport found no sample of $unit in $2"
	[ -s pp.tsv ] || { cat pprof.err >&2; fail "go tool pprof -top found no sample of unit $unit in $1"; }
	join -t "$(printf '\t')" -a 1 -a 2 -e 0 -o 0,1.2,2.2 pre.tsv pp.tsv |
		awk -F '\t' -v f="$1" -v w="$3" '
			$2 + 0 < 0.1 && $3 + 0 < 0.1 { next }
			w == "children" && $1 == "<unknown>" { next }
			{ n++; d = $2 - $3; if (d < 0) d = -d
			  if (d > 0.5) { printf "FAIL: %s: %s %s: preport %s%%, pprof %s%%\n", f, w, $1, $2, $3 > "/dev/stderr"; bad++ } }
			END { print n + 0; exit bad > 0 }' || fail "$1: go tool pprof's $3 shares disagree with preport's on $2"
}
i=0
for f in $closed; do
	i=$((i + 1))
	for p in "out/${f%.data}.pb.gz" "$(sed -n "${i}p" recv/log | cut -d' ' -f6)"; do
		flat=$(agree "$p" "out/$f" self)
		awk -F '\t' '$1 == "unw_leaf" && $2 > 0 { n++ } END { exit n < 1 }' pp.tsv ||
			{ cat pp.tsv; fail "$p: unw_chain's leaf unw_leaf has no flat share"; }
		cum=$(agree "$p" "out/$f" children)
		for fn in main unw_a unw_b unw_c unw_leaf; do
			grep -q "^$fn	" pp.tsv || { cat pp.tsv; fail "$p: no $fn in the service's stacks"; }
		done
		go tool pprof -tags "$p" > tags.txt 2> /dev/null || fail "$p: go tool pprof -tags failed"
		for l in host comm pid unit; do
			grep -q "^ *$l: Total" tags.txt || { cat tags.txt; fail "$p: no label $l"; }
		done
		grep -q ": $host\$" tags.txt || { cat tags.txt; fail "$p: the host label is not $host"; }
		grep -q ": unw_chain\$" tags.txt || { cat tags.txt; fail "$p: no comm label unw_chain"; }
		echo "ok: $p: $flat self and $cum children rows of $unit agree with preport on $f to 0.5 point; labels host, unit, comm, pid"
	done
done
echo ok
