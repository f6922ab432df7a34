/* libFuzzer target for the control-socket request parser (ctl__parse_request): the input is one
 * request line without its '\n', as precordd's server reads it from any local user. A request
 * that parses must survive a round trip: ctl__format_request writes it, and parsing that line
 * gives the same request. Seeds: tests/fuzz/corpus/fuzz_ctl/. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/ctl.h"

static bool same(const struct ctl_request *a, const struct ctl_request *b)
{
	return a->verb == b->verb && a->pid == b->pid && !strcmp(a->cgroup, b->cgroup) &&
	       a->duration_ms == b->duration_ms && a->frequency == b->frequency &&
	       a->callgraph == b->callgraph && a->lossless == b->lossless;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_request req, again;
	char line[CTL_MAX_LINE + 1];
	char *buf;
	int n;

	/* An exact-size copy, not NUL-terminated: the parser must keep to len. */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	memset(&req, 0, sizeof(req));
	if (ctl__parse_request(buf, size, &req) < 0) {
		if (!*ctl__request_error(&req))
			__builtin_trap();	/* a refusal always says why */
		free(buf);
		return 0;
	}
	free(buf);
	n = ctl__format_request(&req, line, sizeof(line));
	if (n <= 0 || line[n - 1] != '\n')
		return 0;
	memset(&again, 0, sizeof(again));
	if (ctl__parse_request(line, n - 1, &again) < 0 || !same(&req, &again))
		__builtin_trap();
	return 0;
}
