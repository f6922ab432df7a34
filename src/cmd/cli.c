/* The programs' error line (see cli.h): one prefix, one line, stderr. */
#include "cmd/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static const char *prog;

void cli__set_prog(const char *name)
{
	prog = name;
}

void cli__err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog ? prog : program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
