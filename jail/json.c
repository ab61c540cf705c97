/* JSON strings for the status record and the audit log, which the runner
 * writes in C (it runs before the Go runtime): whatever bytes an argv, a
 * path or a profile name holds, the line stays valid JSON. */
#include <stdint.h>
#include <stdio.h>

#include "jail/json.h"

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(f, "\\u%04x", *c);
		else if (*c < 0x80)
			fputc(*c, f);
		else {
			/* Only well-formed UTF-8 goes through as is: no overlong
			 * forms, no surrogates, nothing past U+10FFFF. */
			int n = (*c & 0xe0) == 0xc0 ? 1 : (*c & 0xf0) == 0xe0 ? 2 : (*c & 0xf8) == 0xf0 ? 3 : -1;
			int ok = n > 0;
			for (int i = 1; ok && i <= n; i++)
				ok = (c[i] & 0xc0) == 0x80;
			if (ok) {
				uint32_t cp = n == 1 ? (c[0] & 0x1fu) : n == 2 ? (c[0] & 0x0fu) : (c[0] & 0x07u);
				for (int i = 1; i <= n; i++)
					cp = cp << 6 | (c[i] & 0x3fu);
				uint32_t min = n == 1 ? 0x80 : n == 2 ? 0x800 : 0x10000;
				ok = cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
			}
			if (!ok) {
				fputs("\\ufffd", f);
				continue;
			}
			fwrite(c, 1, (size_t)n + 1, f);
			c += n;
		}
	}
	fputc('"', f);
}
