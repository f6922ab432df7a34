# Every Debian package the build and the tests use is one that `make deps` installs: each
# system header included by a source file (src/, ringbuf/, unwind/, tests/, bench/) and each
# outside tool the tests, the demo and the benches run must come (per dpkg -S) from a package
# in the Makefile's DEB_PKGS, or from one those depend on, or from an Essential package (there
# on every Debian system). The headers are looked up in the compiler's own search path (plus
# the -I of pkg-config for the Makefile's PKGS), as the compiler finds them.
. "$(dirname "$0")/lib.sh"

command -v dpkg-query > /dev/null 2>&1 || skip "not a Debian system (no dpkg-query)"
mk="$TOP/Makefile"
# The value of a make variable, continuation lines joined.
make_var() { sed -n "/^$1 *:*= */,/[^\\\\]\$/p" "$mk" | tr -d '\\' | sed "s/^$1 *:*= *//" | tr -s ' \t\n' '   '; }
pkgs=$(make_var DEB_PKGS)
[ -n "$pkgs" ] || fail "no DEB_PKGS in $mk"
echo "DEB_PKGS: $pkgs"

# The packages that installing DEB_PKGS brings: their Depends and Pre-Depends, recursively
# (an alternative 'a | b' counts whichever is installed; a virtual package counts its installed
# providers), plus every Essential package.
dpkg-query -W -f '${Package}\t${Essential}\t${Provides}\t${Depends}, ${Pre-Depends}\n' > installed.txt
printf '%s\n' $pkgs | awk -F '\t' '
	function name(s) { sub(/^[ \t]+/, "", s); sub(/[ \t(:].*$/, "", s); return s }
	FNR == NR { root[$0] = 1; next }
	{
		deps[$1] = $4; inst[$1] = 1
		if ($2 == "yes") root[$1] = 1
		n = split($3, pv, ",")
		for (i = 1; i <= n; i++) if (name(pv[i]) != "") prov[name(pv[i])] = prov[name(pv[i])] " " $1
	}
	function add(p,   d, n, i, k, m, alt, a, q, np, pp) {
		if (p in have) return
		have[p] = 1
		n = split(deps[p], d, ",")
		for (i = 1; i <= n; i++) {
			m = split(d[i], alt, "|")
			for (k = 1; k <= m; k++) {
				q = name(alt[k])
				if (q == "") continue
				if (q in inst) add(q)
				np = split(prov[q], pp, " ")
				for (a = 1; a <= np; a++) add(pp[a])
			}
		}
	}
	END { for (p in root) add(p); for (p in have) print p }' - installed.txt | sort > closure.txt
echo "$(wc -l < closure.txt) packages come with DEB_PKGS and the Essential ones"

# The package that ships each file: one dpkg -S for all of them (it reads its whole database
# each time), under each name a file may have (a symlink's target; /bin and /usr/bin are one on
# a merged /usr). owners.txt: "PATH PKG...".
owners() { # FILE...
	for f in "$@"; do
		printf '%s\n' "$f" "$(readlink -f "$f")" "/usr${f#/usr}" "${f#/usr}"
	done | sort -u > paths.txt
	dpkg -S $(cat paths.txt) 2> /dev/null | grep -v '^diversion by' |
		sed -n 's/^\(.*\): \(\/.*\)$/\2 \1/p' | sed 's/:[a-z0-9]*//g; s/,//g' > owners.txt || true
}
owner() { # FILE
	for f in "$1" "$(readlink -f "$1")" "/usr${1#/usr}" "${1#/usr}"; do
		o=$(awk -v f="$f" '$1 == f { $1 = ""; print; exit }' owners.txt)
		[ -n "$o" ] && { echo "$o"; return 0; }
	done
	return 1
}
bad=0
# covered WHAT FILE: FILE's package is one DEB_PKGS brings
covered() {
	o=$(owner "$2") || { echo "  $1: $2 belongs to no Debian package (dpkg -S)"; bad=1; return; }
	for p in $o; do grep -qx "$p" closure.txt && return 0; done
	echo "  $1 ($2) comes from$o, which DEB_PKGS does not install: add it to DEB_PKGS in the Makefile"
	bad=1
}

# Headers: the compiler's search path, then pkg-config's -I for the Makefile's libraries.
search_dirs() { # LANG
	cc -x "$1" -E -v - < /dev/null 2>&1 | sed -n '/^#include <\.\.\.> search starts here:/,/^End of search list/p' | sed -n 's/^ //p'
}
dirs="$(for f in $(pkg-config --cflags-only-I $(make_var PKGS) check 2> /dev/null); do echo "${f#-I}"; done)
$(search_dirs c)
$(search_dirs c++)"
headers=$(cd "$TOP" && grep -rhoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<[^>]+>' \
	--include='*.c' --include='*.h' --include='*.cc' --include='*.cpp' \
	src ringbuf unwind tests bench 2> /dev/null | sed -E 's/.*<([^>]+)>.*/\1/' | sort -u)
[ -n "$headers" ] || fail "no #include <...> found in the sources"
# Tools: each one that a test, the demo or a bench script runs, found by PATTERN in their text
# outside comments (this file, which names them all, left out). hotspot's parser is not on
# PATH: Debian installs it in libexec. man is run by systemd-analyze verify, for the unit's
# Documentation= pages (a minimal Debian has no man-db).
tools="perf:perf
readelf:readelf
pgrep:pgrep
ps:ps
systemd-analyze:systemd-analyze
go:go (tool|run|build|version)
stress-ng:stress-ng
hotspot-perfparser:hotspot-perfparser
protoc-c:protoc-c
curl:curl
clang:clang
valgrind:valgrind
xmllint:xmllint
man:systemd-analyze verify"

# "WHAT FILE" lines: each header and tool with the file it is.
: > found.txt
for h in $headers; do
	f=""
	for d in $dirs; do [ -e "$d/$h" ] && { f="$d/$h"; break; }; done
	[ -n "$f" ] || { echo "  <$h>: not on this machine; which Debian package ships it?"; bad=1; continue; }
	echo "<$h> $f" >> found.txt
done
while IFS=: read -r tool pat; do
	grep -rhE "(^|[^a-zA-Z0-9_./-])$pat([^a-zA-Z0-9_-]|\$)" "$TOP/tests" "$TOP/bench" \
		--include='*.sh' --include='*.c' --exclude=test_deps.sh |
		grep -qvE '^[[:space:]]*(#|\*|/\*|//)' || continue
	case $tool in
	hotspot-perfparser) path=$(ls /usr/lib/*/libexec/hotspot-perfparser 2> /dev/null | head -n 1) ;;
	*) path=$(command -v "$tool" || true) ;;
	esac
	[ -n "$path" ] || { echo "  $tool: used by the tests and not installed; which Debian package ships it?"; bad=1; continue; }
	echo "$tool $path" >> found.txt
done <<EOF
$tools
EOF
owners $(cut -d' ' -f2 found.txt)
while read -r what path; do covered "$what" "$path"; done < found.txt
echo "$(grep -c '^<' found.txt) system headers and $(grep -vc '^<' found.txt) tools checked:" \
	"$(grep -v '^<' found.txt | cut -d' ' -f1 | tr '\n' ' ')"
[ "$bad" -eq 0 ] || fail "packages missing from DEB_PKGS (above)"
echo ok
