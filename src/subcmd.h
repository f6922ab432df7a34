/* precord's subcommands other than recording: "bench" (measurements in perf bench's shape). */
#ifndef PRECORD_SUBCMD_H
#define PRECORD_SUBCMD_H

/* precord bench synthesize [-t]: argv[0] is "bench". Returns the exit status. */
int subcmd_bench(int argc, char **argv);

#endif
