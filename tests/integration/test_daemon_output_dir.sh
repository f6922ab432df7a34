# precordd creates and deletes files in output_dir as root, so it refuses one that another
# user could change: a directory of a user's with a .control symlink (which the daemon's start
# would otherwise have emptied: it removes the control recordings a crash left there), one
# open to every user, a .control symlink root left, and a reload onto such a directory. A
# root-owned directory below /tmp's kind of sticky, world-writable parent is accepted.
. "$(dirname "$0")/daemon_lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root to give directories to another user"
id nobody > /dev/null 2>&1 || skip "needs a nobody user"
mkdir victim && echo keep > victim/precious

# start_refused CONF PATTERN...: precordd exits non-zero at start, its message holds every PATTERN
start_refused() {
	c=$1; shift
	rc=0; NOTIFY_SOCKET="$T/notify.sock" timeout 60 "$PRECORDD" --config "$c" > refused.out 2>&1 || rc=$?
	[ "$rc" != 0 ] && [ "$rc" != 124 ] || { cat refused.out; fail "precordd started on $c (exit $rc)"; }
	for p in "$@"; do
		grep -q -- "$p" refused.out || { cat refused.out; fail "no '$p' in the refusal"; }
	done
	[ -f victim/precious ] || fail "the victim's file was deleted"
}
start_listener

# 1. A user's directory, with .control pointing at the victim.
mkdir out && chown nobody out && ln -s "$T/victim" out/.control
conf d.conf socket_group=none
start_refused d.conf "$T/out belongs to uid $(id -u nobody)" "chown root"
rm -rf out

# 2. Root's, but writable by every user (a user could plant .control).
mkdir out && chmod 777 out
start_refused d.conf "$T/out is writable by every user" "chmod go-w"
rm -rf out

# 3. Root's and closed, with a .control symlink left in it.
mkdir out && ln -s "$T/victim" out/.control
start_refused d.conf "$T/out/.control is not a directory of root's"
rm -rf out

# 4. Accepted: root's own directory under a sticky world-writable parent (as under /tmp).
mkdir -p sticky && chmod 1777 sticky
# conf_dir FILE DIR: a config with output_dir DIR
conf_dir() { printf 'output_dir = %s\nsocket = %s\nsocket_group = none\n' "$2" "$T/ctl.sock" > "$1"; }
conf_dir ok.conf "$T/sticky/out"
start_daemon ok.conf
wait_ready
[ -d sticky/out/.control ] || fail "no .control made"
assert_eq "$(stat -c %a sticky/out/.control)" 700 ".control's mode"

# 5. A reload onto a user's directory: refused, said, and the daemon stays up and answers.
mkdir usr && chown nobody usr && ln -s "$T/victim" usr/.control
conf_dir ok.conf "$T/usr"
kill -HUP "$DPID"
wait_for "$T/daemon.log" "$T/usr belongs to uid"
"$PRECORD" ctl -s "$T/ctl.sock" status > st.out || fail "status after the refused reload"
[ -f victim/precious ] || fail "the victim's file was deleted at the reload"
stop_daemon
assert_eq "$DRC" 0 "precordd exit status"
echo "output_dir: unsafe ones refused, the victim kept"
