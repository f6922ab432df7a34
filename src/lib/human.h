/* Byte counts for people: "512 B", "1.5 KiB", "64.0 MiB". One spelling for every status line
 * and summary (precord's, precordd's), in powers of 1024 with their IEC names. */
#ifndef PRECORD_HUMAN_H
#define PRECORD_HUMAN_H

#include <stddef.h>
#include <stdint.h>

/* Write bytes as "N B" below 1 KiB, else with one decimal and KiB, MiB, GiB or TiB, into buf
 * (size bytes, NUL-terminated, truncated if short). Returns buf. Cannot fail. */
char *human__bytes(uint64_t bytes, char *buf, size_t size);

#endif
