// Package wire is the plan's wire format between the Go parent and the init
// stage, which is C that runs before the Go runtime and reads it with wire.h.
// It is a flat little-endian stream, not a general encoding: each reader knows
// the order of its fields, so there is nothing to parse and nothing to allocate.
package wire

import "encoding/binary"

// Writer appends fields to a plan.
type Writer struct {
	buf []byte
}

// U32 appends a 32-bit field.
func (w *Writer) U32(v uint32) { w.buf = binary.LittleEndian.AppendUint32(w.buf, v) }

// U64 appends a 64-bit field.
func (w *Writer) U64(v uint64) { w.buf = binary.LittleEndian.AppendUint64(w.buf, v) }

// Bytes appends a length-prefixed byte string with a trailing NUL, so the C
// side can use it in place as a string.
func (w *Writer) Bytes(b []byte) {
	w.U32(uint32(len(b)))
	w.buf = append(w.buf, b...)
	w.buf = append(w.buf, 0)
}

// Str appends a string; callers have already refused strings holding NUL.
func (w *Writer) Str(s string) {
	w.U32(uint32(len(s)))
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, 0)
}

// Strs appends a count and then each string.
func (w *Writer) Strs(ss []string) {
	w.U32(uint32(len(ss)))
	for _, s := range ss {
		w.Str(s)
	}
}

// Raw appends fields another writer wrote, as they are.
func (w *Writer) Raw(b []byte) { w.buf = append(w.buf, b...) }

// Grow makes room for n more bytes, so a large plan is built without
// copying it again and again.
func (w *Writer) Grow(n int) {
	if cap(w.buf)-len(w.buf) < n {
		buf := make([]byte, len(w.buf), len(w.buf)+n)
		copy(buf, w.buf)
		w.buf = buf
	}
}

// Begin opens a length-prefixed block, written in place; End closes it.
func (w *Writer) Begin() int {
	w.U32(0)
	return len(w.buf)
}

// End closes the block Begin opened at start, as Bytes would have written
// it: its length first and a NUL after.
func (w *Writer) End(start int) {
	binary.LittleEndian.PutUint32(w.buf[start-4:], uint32(len(w.buf)-start))
	w.buf = append(w.buf, 0)
}

// Len is the number of bytes written so far.
func (w *Writer) Len() int { return len(w.buf) }

// Data returns the plan written so far.
func (w *Writer) Data() []byte { return w.buf }
