#!/bin/sh
# Threads renamed after their last sample: perf's pid column names a thread by its last name in
# the recording, and its comm column keeps each sample's name, cut to the width of the threads'
# last names. A program whose second thread spins as "early-name", then renames itself
# "late-name" and sleeps; its main thread spins, then becomes "main-late" and sleeps. The
# tables are perf 6.1's, text for text (a system-wide recording that caught such a thread of
# another test's once showed the old name in preport's pid column).
. "$(dirname "$0")/lib.sh"

command -v perf > /dev/null 2>&1 || skip "perf is not installed"
command -v cc > /dev/null 2>&1 || skip "cc is missing"

cat > ren.c << 'SRC'
#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>
volatile long sink;
static void spin(long n) { for (long i = 0; i < n; i++) sink += i ^ (sink >> 3); }
static void *worker(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "early-name");
	spin(60000000L);
	prctl(PR_SET_NAME, "late-name");
	usleep(20000);
	return NULL;
}
int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	spin(60000000L);
	pthread_join(t, NULL);
	prctl(PR_SET_NAME, "main-late");
	usleep(20000);
	return 0;
}
SRC
cc -O1 -pthread -o ren ren.c || fail "cc ren.c failed"
perf record -q -e cpu-clock -o r.data ./ren > /dev/null 2>&1 || fail "perf record failed"
for args in "--sort pid,comm" "--sort comm,pid" "--sort comm" "--sort comm,dso -t ," "--hierarchy -s comm,pid"; do
	# shellcheck disable=SC2086
	perf report -i r.data --stdio -g none $args 2> /dev/null | grep -E '^# [A-Z.]|%' | grep -vE '^# (To display|\(Tip)' > perf.t
	# shellcheck disable=SC2086
	preport -i r.data -g none $args | grep -E '^# [A-Z.]|%' > pre.t
	case $args in
	*pid*) grep -q 'late' perf.t || { cat perf.t; fail "perf shows no late name for $args"; } ;;
	esac
	cmp -s perf.t pre.t || { diff perf.t pre.t >&2; fail "$args: differs from perf's"; }
	echo "ok: $args: $(grep -c % pre.t) rows as perf prints them"
done
# A pid reused by another process with a shorter name: a FORK of a tid seen before makes another
# thread, as in perf: the pid column names each row after the thread of the sample that made it
# (by that thread's last name, the rows of both processes under one pid cell when only the pid
# keys them), and the comm column is as wide as the longest of those names. The pid is reused
# through ns_last_pid; when another process takes it first, that part is not checked.
cat > spin.c << 'SRC'
#include <stdlib.h>
#include <sys/prctl.h>
volatile long sink;
int main(int argc, char **argv)
{
	long n = atol(argv[2]);

	prctl(PR_SET_NAME, argv[1]);
	for (long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
	return 0;
}
SRC
cc -O1 -o spin spin.c || fail "cc spin.c failed"
cat > reuse.sh << 'SH'
./spin aaaaaaaaaaaa 30000000 & p=$!; wait $p
echo $((p - 1)) > /proc/sys/kernel/ns_last_pid
./spin bb 30000000 & q=$!; wait $q
[ "$p" = "$q" ] && echo reused > reused.txt
SH
rm -f reused.txt
perf record -q -e cpu-clock -o reuse.data -- sh reuse.sh > /dev/null 2>&1 || fail "perf record sh reuse.sh failed"
if [ -s reused.txt ]; then
	for args in "" "--sort comm" "--sort comm,dso -t ," "--sort pid" "--sort pid,comm" \
		"--sort comm,pid" "--sort pid,dso" "--hierarchy -s pid,comm" "-F pid,comm,overhead"; do
		# shellcheck disable=SC2086
		perf report -i reuse.data --stdio -g none $args 2> /dev/null | grep -E '^# [A-Z.]|%' |
			grep -vE '^# (To display|\(Tip)' > perf.t
		# shellcheck disable=SC2086
		preport -i reuse.data -g none $args | grep -E '^# [A-Z.]|%' > pre.t
		grep -q 'aaaaaaaaaaaa' pre.t || { cat pre.t; fail "reused pid, $args: the first process's name is cut"; }
		case $args in
		"--sort pid,comm" | "--sort comm,pid" | "-F pid,comm,overhead") grep -qE ':bb( |$)' pre.t || { cat pre.t; fail "reused pid, $args: no row of the second process's thread"; } ;;
		esac
		cmp -s perf.t pre.t || { diff perf.t pre.t >&2; fail "reused pid, $args: differs from perf's"; }
	done
	echo "ok: a reused pid: its processes' rows keep their names, its pid cells their threads', as perf's"
else
	echo "(the pid was not reused: another process took it; that part not checked)"
fi
preport -i r.data -g none --sort pid,comm | grep -qE ':late-name +early-nam( |$)' ||
	fail "the worker's row does not show its last name and its samples' name, cut to nine"
echo ok
