/* The program a recording follows: a command precord starts, held between fork and exec so the
 * events (enable_on_exec) and the pause cgroup are in place before its first instruction, or
 * running processes given by pid. */
#ifndef PRECORD_TARGET_H
#define PRECORD_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct target;

/* Whether cmd can be executed, searching PATH as execvp does (past what it cannot execute).
 * Returns 0, with the file exec would run in ret_path (len bytes); -ENOENT (not found); or, with
 * the first file found in ret_path, -EISDIR (a directory), -ENODEV (not a regular file) or
 * -EACCES (not executable). Lets a caller refuse before creating anything. */
int target__check_command(const char *cmd, char *ret_path, size_t len);

/* Fork argv[0] (searched in PATH) and hold the child before exec. Returns NULL with errno set. */
struct target *target__fork_held(char *const argv[]);

/* As target__fork_held, with the child leading a process group of its own (its pid), so that
 * one signal to the group reaches the command and every child that stays in it. When the
 * recorder's group owns its terminal (stdin) the command's group is given the terminal, so the
 * command reads it as before (Ctrl-C then reaches the command, not the recorder); the terminal
 * goes back to the recorder's group once the command has ended, or at target__free. */
struct target *target__fork_held_group(char *const argv[]);

/* The command's process group (target__fork_held_group), or 0. */
pid_t target__pgid(const struct target *t);
/* Watch running processes. Returns NULL with errno set (ESRCH: a pid does not exist). */
struct target *target__attach(const pid_t *pids, size_t nr);

/* The held child's pid, or the first watched pid. */
pid_t target__pid(const struct target *t);

/* Let the held child exec. Returns 0, or -errno when exec failed (ENOENT: no such command,
 * EACCES: not executable); the child has then exited with 127/126. */
int target__release(struct target *t);

/* An fd that becomes readable when the target has ended (all watched pids, or the child),
 * for poll(). */
int target__fd(const struct target *t);

/* True once the target has ended; for a command, *ret_status gets its wait status. Never
 * blocks. */
bool target__ended(struct target *t, int *ret_status);

/* Ask a still-running command to end (SIGTERM), as perf does when recording stops first;
 * a no-op for attached pids. */
void target__terminate(struct target *t);

/* Wait up to timeout_ms for the command to end; returns true if it has. */
bool target__wait(struct target *t, int timeout_ms, int *ret_status);

/* A held child that was never released is killed. NULL is a no-op. */
void target__free(struct target *t);

#endif
