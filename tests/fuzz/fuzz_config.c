/* libFuzzer target for precordd's configuration parser (config__parse): the input is the text
 * of a configuration file, in a buffer of its exact size (it need not end in a NUL). A bad file
 * must be refused with a message naming the file and the line; a good one must free cleanly.
 * Seeds: tests/fuzz/corpus/fuzz_config/. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct daemon_config c;
	char *text;
	int err;

	text = malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	memset(&c, 0, sizeof(c));
	err = config__parse(text, size, "fuzz.conf", &c);
	if (err == 0) {
		if (!config__same_recording(&c, &c))
			__builtin_trap();
	} else if (strncmp(config__error(&c), "fuzz.conf:", 10)) {
		__builtin_trap();	/* the message names the file (and the line) */
	}
	config__free(&c);
	free(text);
	return 0;
}
