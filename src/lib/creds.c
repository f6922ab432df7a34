/* Running work as another user, on its own thread. Each step is a raw syscall so that it
 * applies to the calling thread only (the kernel keeps credentials per thread; glibc's
 * wrappers broadcast them to the whole process). Leaving uid 0 for a non-zero uid clears
 * the permitted and effective sets (keep-caps is never set), capset clears the inheritable
 * one, and capget then proves that nothing remains. */
#include "lib/creds.h"

#include <errno.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct run {
	const struct creds *c;
	int (*fn)(void *arg);
	void *arg;
	int ret;
};

/* Drop every capability, the inheritable set too (a uid change keeps it), and prove that
 * nothing remains. */
static int drop_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	memset(d, 0xff, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			return -EPERM;
	return 0;
}

static int switch_creds(const struct creds *c)
{
	if (syscall(SYS_setgroups, c->nr_groups, c->groups) < 0)
		return -errno;
	if (syscall(SYS_setresgid, c->gid, c->gid, c->gid) < 0)
		return -errno;
	if (syscall(SYS_setresuid, c->uid, c->uid, c->uid) < 0)
		return -errno;
	/* no ambient set to inherit: a thread started by fn would get nothing back */
	syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	return drop_caps();
}

static void *run_thread(void *p)
{
	struct run *r = p;
	int err = switch_creds(r->c);

	r->ret = err ? err : r->fn(r->arg);
	return NULL;
}

int creds__run(const struct creds *c, int (*fn)(void *arg), void *arg)
{
	struct run r = { c, fn, arg, 0 };
	pthread_t t;
	int err;

	if (!c)
		return fn(arg);
	if (c->nr_groups > CREDS_MAX_GROUPS)
		return -EINVAL;
	err = pthread_create(&t, NULL, run_thread, &r);
	if (err)
		return -err;
	pthread_join(t, NULL);
	return r.ret;
}

bool creds__may_record_kernel(uid_t uid, long paranoid)
{
	return uid == 0 || paranoid <= 1;
}

long creds__paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	long v = 2;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 2;
		fclose(f);
	}
	return v;
}
