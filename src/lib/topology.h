/* CPU topology read from /sys/devices/system/cpu: online CPUs and, for each CPU, the set of
 * CPUs that share its SMT core, its last-level cache, its NUMA node. Affinity scopes name one of
 * these groupings; "cpu" is the CPU itself and "system" every online CPU. */
#ifndef PRECORD_TOPOLOGY_H
#define PRECORD_TOPOLOGY_H

#include <sched.h> /* cpu_set_t: the Makefile defines _GNU_SOURCE */
#include <stddef.h>

enum topo_scope {
	TOPO_SCOPE_CPU,
	TOPO_SCOPE_SMT,
	TOPO_SCOPE_CACHE,
	TOPO_SCOPE_NUMA,
	TOPO_SCOPE_SYSTEM,
};

struct topology;

/* Read the topology under sysfs_root ("/sys" normally; tests pass a fake tree). Returns NULL
 * with errno set. */
struct topology *topology__read(const char *sysfs_root);

int topology__nr_cpus(const struct topology *t);  /* highest possible CPU number + 1 */
/* Online CPUs; the set is sized for topology__nr_cpus(). */
const cpu_set_t *topology__online(const struct topology *t);
/* The CPUs that share cpu's scope. Returns 0, or -EINVAL for an offline or unknown CPU. */
int topology__scope_cpus(const struct topology *t, int cpu, enum topo_scope scope,
			 cpu_set_t *ret_set);

/* "cpu", "smt", "cache", "numa", "system" <-> enum. parse returns 0 or -EINVAL. */
int topo_scope__parse(const char *s, enum topo_scope *ret);
const char *topo_scope__name(enum topo_scope scope);

/* Parse a CPU list such as "0-3,6" into set; returns 0, -ERANGE (a CPU number of CPU_SETSIZE
 * or more) or -EINVAL. An empty list is valid and empty. */
int cpulist__parse(const char *s, cpu_set_t *ret_set);

void topology__free(struct topology *t);

/* The CPU time the hypervisor has taken from this machine's virtual CPUs since boot, all CPUs
 * together (the steal column of /proc/stat, under proc_root: "/proc" normally), ns; 0 when not
 * known (no such column, or not a virtual machine). */
unsigned long long topology__steal_ns(const char *proc_root);

#endif
