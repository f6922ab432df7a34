/* CPU topology from sysfs: the online set and, per online CPU, the CPUs sharing its SMT core, its
 * last-level cache and its NUMA node. Everything is read once in topology__read(); every stored
 * set is already intersected with the online set, so a scope never names an offline CPU.
 * Missing files degrade rather than fail: no SMT file means a core of one, no cache directory
 * means the LLC is taken to be the package, no node directory means one node. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/topology.h"

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

struct topology {
	int nr_cpus;
	cpu_set_t online;
	cpu_set_t *smt;  /* nr_cpus entries, meaningful for online CPUs only */
	cpu_set_t *llc;
	cpu_set_t *node;
};

static const char *const scope_names[] = {
	[TOPO_SCOPE_CPU] = "cpu",
	[TOPO_SCOPE_SMT] = "smt",
	[TOPO_SCOPE_CACHE] = "cache",
	[TOPO_SCOPE_NUMA] = "numa",
	[TOPO_SCOPE_SYSTEM] = "system",
};

int topo_scope__parse(const char *s, enum topo_scope *ret)
{
	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(scope_names); i++) {
		if (!strcmp(s, scope_names[i])) {
			*ret = (enum topo_scope)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *topo_scope__name(enum topo_scope scope)
{
	if ((unsigned int)scope >= ARRAY_SIZE(scope_names))
		return NULL;
	return scope_names[scope];
}

/* Parse one decimal CPU number at *p, advancing it. Returns the number or -1. */
static long parse_cpu(const char **p)
{
	const char *s = *p;
	long v = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (*s - '0');
		if (v >= CPU_SETSIZE)
			return -2;
		s++;
	}
	*p = s;
	return v;
}

int cpulist__parse(const char *s, cpu_set_t *ret_set)
{
	cpu_set_t set;

	if (!s)
		return -EINVAL;
	CPU_ZERO(&set);
	while (*s == ' ' || *s == '\t')
		s++;
	/* An empty list (a memory-only NUMA node, "\n") is valid and empty. */
	if (*s == '\0' || *s == '\n') {
		*ret_set = set;
		return 0;
	}
	for (;;) {
		long lo = parse_cpu(&s), hi = lo;

		if (lo < 0)
			return lo == -2 ? -ERANGE : -EINVAL;
		if (*s == '-') {
			s++;
			hi = parse_cpu(&s);
			if (hi == -2)
				return -ERANGE;
			if (hi < lo)
				return -EINVAL;
		}
		for (long c = lo; c <= hi; c++)
			CPU_SET(c, &set);
		if (*s == ',') {
			s++;
			continue;
		}
		if (*s == '\n')
			s++;
		if (*s != '\0')
			return -EINVAL;
		break;
	}
	*ret_set = set;
	return 0;
}

/* Read a small sysfs file into buf (NUL-terminated). Returns 0 or -errno. */
static int read_small(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int read_cpulist(const char *path, cpu_set_t *ret_set)
{
	char buf[4096];
	int r = read_small(path, buf, sizeof(buf));

	if (r < 0)
		return r;
	return cpulist__parse(buf, ret_set);
}

static void set_and(cpu_set_t *dst, const cpu_set_t *mask)
{
	CPU_AND(dst, dst, mask);
}

static int highest_cpu(const cpu_set_t *set)
{
	for (int c = CPU_SETSIZE - 1; c >= 0; c--)
		if (CPU_ISSET(c, set))
			return c;
	return -1;
}

/* The shared_cpu_list of cpu's highest-level cache, or -ENOENT when sysfs has no cache info. */
static int read_llc(const char *root, int cpu, cpu_set_t *ret_set)
{
	char path[PATH_MAX], buf[64];
	int best_level = -1;

	for (int k = 0; k < 64; k++) {
		cpu_set_t set;
		int level;

		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cache/index%d/level", root,
			 cpu, k);
		if (read_small(path, buf, sizeof(buf)) < 0)
			break;
		level = atoi(buf);
		/* An instruction cache never outranks the unified cache of the same level. */
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cache/index%d/type", root,
			 cpu, k);
		if (read_small(path, buf, sizeof(buf)) == 0 && !strncmp(buf, "Instruction", 11))
			continue;
		if (level <= best_level)
			continue;
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list",
			 root, cpu, k);
		if (read_cpulist(path, &set) < 0)
			continue;
		best_level = level;
		*ret_set = set;
	}
	return best_level < 0 ? -ENOENT : 0;
}

static int read_nodes(const char *root, struct topology *t)
{
	char path[PATH_MAX];
	cpu_set_t unlisted = t->online;
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;

	snprintf(path, sizeof(path), "%s/devices/system/node", root);
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			char *end;
			long n;
			cpu_set_t set;

			if (strncmp(de->d_name, "node", 4) || !isdigit((unsigned char)de->d_name[4]))
				continue;
			n = strtol(de->d_name + 4, &end, 10);
			if (*end || n < 0)
				continue;
			snprintf(path, sizeof(path), "%s/devices/system/node/%s/cpulist", root,
				 de->d_name);
			if (read_cpulist(path, &set) < 0)
				continue;
			set_and(&set, &t->online);
			for (int c = 0; c < t->nr_cpus; c++) {
				if (!CPU_ISSET(c, &set))
					continue;
				t->node[c] = set;
				CPU_CLR(c, &unlisted);
			}
		}
	}
	/* No node directory (CONFIG_NUMA off) or CPUs no node claims: they form one node. */
	for (int c = 0; c < t->nr_cpus; c++)
		if (CPU_ISSET(c, &unlisted))
			t->node[c] = unlisted;
	return 0;
}

struct topology *topology__read(const char *sysfs_root)
{
	char path[PATH_MAX];
	cpu_set_t possible;
	struct topology *t;
	int r;

	if (!sysfs_root)
		sysfs_root = "/sys";
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/online", sysfs_root);
	r = read_cpulist(path, &t->online);
	if (r < 0)
		goto err;
	if (CPU_COUNT(&t->online) == 0) {
		r = -ENODEV;
		goto err;
	}
	snprintf(path, sizeof(path), "%s/devices/system/cpu/possible", sysfs_root);
	if (read_cpulist(path, &possible) < 0)
		possible = t->online;
	t->nr_cpus = highest_cpu(&possible) + 1;
	if (highest_cpu(&t->online) + 1 > t->nr_cpus)
		t->nr_cpus = highest_cpu(&t->online) + 1;

	t->smt = calloc(t->nr_cpus, sizeof(*t->smt));
	t->llc = calloc(t->nr_cpus, sizeof(*t->llc));
	t->node = calloc(t->nr_cpus, sizeof(*t->node));
	if (!t->smt || !t->llc || !t->node) {
		r = -ENOMEM;
		goto err;
	}

	for (int c = 0; c < t->nr_cpus; c++) {
		if (!CPU_ISSET(c, &t->online))
			continue;
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/topology/thread_siblings_list",
			 sysfs_root, c);
		if (read_cpulist(path, &t->smt[c]) < 0)
			CPU_ZERO(&t->smt[c]);
		if (read_llc(sysfs_root, c, &t->llc[c]) < 0) {
			/* Some VMs expose no cache directory: the package is the best guess. */
			snprintf(path, sizeof(path),
				 "%s/devices/system/cpu/cpu%d/topology/package_cpus_list", sysfs_root, c);
			if (read_cpulist(path, &t->llc[c]) < 0) {
				snprintf(path, sizeof(path),
					 "%s/devices/system/cpu/cpu%d/topology/core_siblings_list",
					 sysfs_root, c);
				if (read_cpulist(path, &t->llc[c]) < 0)
					t->llc[c] = t->online;
			}
		}
		set_and(&t->smt[c], &t->online);
		set_and(&t->llc[c], &t->online);
		/* A CPU always belongs to its own groups, whatever a damaged file says. */
		CPU_SET(c, &t->smt[c]);
		CPU_SET(c, &t->llc[c]);
	}
	r = read_nodes(sysfs_root, t);
	if (r < 0)
		goto err;
	return t;
err:
	topology__free(t);
	errno = -r;
	return NULL;
}

int topology__nr_cpus(const struct topology *t)
{
	return t->nr_cpus;
}

const cpu_set_t *topology__online(const struct topology *t)
{
	return &t->online;
}

int topology__scope_cpus(const struct topology *t, int cpu, enum topo_scope scope,
			 cpu_set_t *ret_set)
{
	if (!t || cpu < 0 || cpu >= t->nr_cpus || !CPU_ISSET(cpu, &t->online))
		return -EINVAL;
	switch (scope) {
	case TOPO_SCOPE_CPU:
		CPU_ZERO(ret_set);
		CPU_SET(cpu, ret_set);
		return 0;
	case TOPO_SCOPE_SMT:
		*ret_set = t->smt[cpu];
		return 0;
	case TOPO_SCOPE_CACHE:
		*ret_set = t->llc[cpu];
		return 0;
	case TOPO_SCOPE_NUMA:
		*ret_set = t->node[cpu];
		return 0;
	case TOPO_SCOPE_SYSTEM:
		*ret_set = t->online;
		return 0;
	}
	return -EINVAL;
}

void topology__free(struct topology *t)
{
	if (!t)
		return;
	free(t->smt);
	free(t->llc);
	free(t->node);
	free(t);
}

unsigned long long topology__steal_ns(const char *proc_root)
{
	char path[PATH_MAX];
	_cleanup_fclose_ FILE *f = NULL;
	unsigned long long v[8] = { 0 };
	long hz = sysconf(_SC_CLK_TCK);

	if (snprintf(path, sizeof(path), "%s/stat", proc_root) >= (int)sizeof(path))
		return 0;
	f = fopen(path, "re");
	/* cpu user nice system idle iowait irq softirq steal */
	if (!f || hz <= 0 || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
				    &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		return 0;
	return v[7] * (1000000000ull / (unsigned long long)hz);
}
