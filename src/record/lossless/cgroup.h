/* Where precord's cgroups go: its own cgroup in the cgroup v2 hierarchy (the first cgroup2
 * mount of /proc/self/mountinfo) or in the cgroup v1 hierarchy with the freezer controller,
 * found from /proc/self/cgroup and the mount's root (a container may show a subtree). */
#ifndef PRECORD_CGROUP_H
#define PRECORD_CGROUP_H

#include <stdbool.h>

/* The directory of our own cgroup in the v2 (v2) or v1 freezer hierarchy, malloc'd in
 * *ret_dir. Returns 0, -ENOENT when there is no such mount or our cgroup is outside what it
 * shows, -ENOMEM, or fopen's -errno. */
int cgroup__find_own(bool v2, char **ret_dir);

#endif
