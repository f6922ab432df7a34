/* Byte counts for people (see human.h). */
#include "lib/human.h"

#include <stdio.h>

char *human__bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	unsigned int i = 0;

	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	if (i)
		snprintf(buf, size, "%.1f %s", v, unit[i]);
	else
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
	return buf;
}
