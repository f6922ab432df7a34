/* What the command-line programs share: the one way they print an error. Modules below never
 * print; a program reports once, here, as "PROG: what failed: why (remedy)". */
#ifndef PRECORD_CLI_H
#define PRECORD_CLI_H

/* Name the program for cli__err ("precord", "preport", "precord ctl record"...). The string
 * must outlive every later call. Until then the name is program_invocation_short_name. */
void cli__set_prog(const char *name);

/* Print "PROG: " and the formatted message and a newline to stderr. */
void cli__err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
