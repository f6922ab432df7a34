/* Running work as another user, on its own thread. Each step is a raw syscall so that it
 * applies to the calling thread only (the kernel keeps credentials per thread; glibc's
 * wrappers broadcast them to the whole process). Leaving uid 0 for a non-zero uid clears
 * every capability unless keep-caps is set; we set it only to keep CAP_PERFMON, then say
 * exactly which capabilities remain with capset. CAP_PERFMON is kept only for a client that
 * has it: perf_event_open does not apply its ptrace check to a CAP_PERFMON caller. */
#include "lib/creds.h"

#include <errno.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

struct run {
	const struct creds *c;
	int (*fn)(void *arg);
	void *arg;
	int ret;
};

static int set_caps(bool perfmon)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (perfmon) {
		d[CAP_PERFMON / 32].effective = 1u << (CAP_PERFMON % 32);
		d[CAP_PERFMON / 32].permitted = 1u << (CAP_PERFMON % 32);
	}
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	/* and back: what the thread holds now must be what was asked, nothing more */
	memset(d, 0xff, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		uint32_t want = perfmon && i == CAP_PERFMON / 32 ? 1u << (CAP_PERFMON % 32) : 0;

		if (d[i].effective != want || (d[i].permitted & ~want) || d[i].inheritable)
			return -EPERM;
	}
	return 0;
}

static int switch_creds(const struct creds *c)
{
	if (syscall(SYS_setgroups, c->nr_groups, c->groups) < 0)
		return -errno;
	if (syscall(SYS_setresgid, c->gid, c->gid, c->gid) < 0)
		return -errno;
	if (c->perfmon && syscall(SYS_prctl, PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return -errno;
	if (syscall(SYS_setresuid, c->uid, c->uid, c->uid) < 0)
		return -errno;
	if (c->perfmon && syscall(SYS_prctl, PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return -errno;
	/* no ambient set to inherit: a thread started by fn would get nothing back */
	syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	return set_caps(c->perfmon);
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

bool creds__may_record_kernel(uid_t uid, unsigned long long cap_eff, long paranoid)
{
	const unsigned long long admin = 1ULL << 21 /* CAP_SYS_ADMIN */;
	const unsigned long long perfmon = 1ULL << CAP_PERFMON;

	if (uid == 0 || (cap_eff & (admin | perfmon)))
		return true;
	return paranoid <= 1;
}

bool creds__has_perfmon(unsigned long long cap_eff)
{
	return cap_eff & ((1ULL << 21) /* CAP_SYS_ADMIN */ | (1ULL << CAP_PERFMON));
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
