/* The plan's wire format in C: the Go planner writes it (wire.go), the
 * runner and the init stage read it here without copying, and C writes it
 * here too (the runner's per-run tail, jail/runplan.c; the plan cache's
 * entries, plancache/store.c). C, as both run before the Go runtime. Every
 * read is bounds-checked; a short or malformed plan sets bad and yields
 * zeros and empty strings. */
#ifndef JAIL_WIRE_H
#define JAIL_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct wire {
	const unsigned char *p, *end;
	int bad;
};

static inline uint32_t wire_u32(struct wire *w)
{
	uint32_t v;
	if (w->bad || (size_t)(w->end - w->p) < sizeof v) {
		w->bad = 1;
		return 0;
	}
	memcpy(&v, w->p, sizeof v); /* little-endian on every arch we build for */
	w->p += sizeof v;
	return v;
}

static inline uint64_t wire_u64(struct wire *w)
{
	uint64_t v;
	if (w->bad || (size_t)(w->end - w->p) < sizeof v) {
		w->bad = 1;
		return 0;
	}
	memcpy(&v, w->p, sizeof v);
	w->p += sizeof v;
	return v;
}

/* wire_bytes returns a pointer into the plan: n bytes followed by a NUL the
 * writer added, so a string can be used in place. */
static inline const char *wire_bytes(struct wire *w, size_t *n)
{
	uint32_t len = wire_u32(w);
	if (w->bad || (size_t)(w->end - w->p) < (size_t)len + 1 || w->p[len] != 0) {
		w->bad = 1;
		if (n)
			*n = 0;
		return "";
	}
	const char *s = (const char *)w->p;
	w->p += (size_t)len + 1;
	if (n)
		*n = len;
	return s;
}

/* wire_str is wire_bytes for text: an embedded NUL makes the plan bad. */
static inline const char *wire_str(struct wire *w)
{
	size_t n;
	const char *s = wire_bytes(w, &n);
	if (!w->bad && strlen(s) != n) {
		w->bad = 1;
		return "";
	}
	return s;
}

/* wire_out writes the format: with p NULL it only counts, so a writer
 * sizes its buffer first and then writes into it whole, never growing. */
struct wire_out {
	unsigned char *p;
	size_t n;
};

static inline void wire_put(struct wire_out *w, const void *data, size_t n)
{
	if (w->p)
		memcpy(w->p + w->n, data, n);
	w->n += n;
}

static inline void wire_put_u32(struct wire_out *w, uint32_t v) { wire_put(w, &v, sizeof v); }

/* wire_put_bytes writes n bytes as wire_bytes reads them (and Go's
 * Writer.Bytes and Writer.Str write them): length, bytes, NUL. */
static inline void wire_put_bytes(struct wire_out *w, const void *s, size_t n)
{
	wire_put_u32(w, (uint32_t)n);
	wire_put(w, s, n);
	wire_put(w, "", 1);
}

#endif
