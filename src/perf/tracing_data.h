/* Reading perf's tracing-data feature (HEADER_TRACING_DATA, version 0.6): where a tracepoint's
 * field sits in the raw data of its samples, from the event's format as the recorder stored it.
 * The payload comes from a file and is treated as hostile: every length is checked. */
#ifndef PRECORD_PERF_TRACING_DATA_H
#define PRECORD_PERF_TRACING_DATA_H

#include <stddef.h>
#include <stdint.h>

/* Offset and size of field `field` of tracepoint sys:event in the payload. Returns 0; -ENOENT
 * when the event or the field is not described; -EBADMSG when the payload is malformed. */
int tracing_data__field(const void *payload, size_t len, const char *sys, const char *event,
			const char *field, uint32_t *ret_offset, uint32_t *ret_size);

#endif
