/* precord's subcommands other than recording: "bench" (measurements in perf bench's shape). */
#ifndef PRECORD_SUBCMD_H
#define PRECORD_SUBCMD_H

/* precord bench synthesize [-t]: argv[0] is "bench". Returns the exit status. */
int subcmd_bench(int argc, char **argv);

/* precord ctl status|rotate|record ...: precordd's control socket (src/ctl_client.c); argv[0]
 * is "ctl". Returns the exit status. */
int subcmd_ctl(int argc, char **argv);

#endif
