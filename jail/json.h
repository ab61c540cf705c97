/* JSON strings, as the runner writes them (json.c). */
#ifndef JAIL_JSON_H
#define JAIL_JSON_H

#include <stdio.h>

/* json_str writes s to f as a JSON string: quotes, backslashes and control
 * characters escaped, well-formed UTF-8 as is, and every byte of anything
 * else as U+FFFD, so the line always parses. */
void json_str(FILE *f, const char *s);

#endif
