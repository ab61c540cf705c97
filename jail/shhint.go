package jail

// jail-sh's spelling of the run flags jail's messages suggest, for the
// CLI's own messages: the C table the runner uses too (shhint.c).

// #include <stdlib.h>
// #include "jail/shhint.h"
import "C"

import "unsafe"

// ShEnv is set in the environment of a run jail sh made (its value "1"):
// the run's messages then spell the flags they suggest as jail-sh takes
// them (ShHints).
const ShEnv = C.JAIL_SH_ENV

// ShHints is msg with each run flag it suggests spelled as jail-sh takes
// it: "allow it with --allow HOST" becomes "allow it with JAIL_ALLOW=HOST",
// "--limits-mode best-effort" becomes JAIL_FLAGS="--limits-mode
// best-effort".
func ShHints(msg string) string {
	s, _ := shHints(msg, 2*len(msg)+1)
	return s
}

// shHints is sh_hints into size bytes, as the runner's buffer is; within
// says it wrote nothing past them.
func shHints(msg string, size int) (s string, within bool) {
	in := C.CString(msg)
	defer C.free(unsafe.Pointer(in))
	// One byte more, which must stay as it was.
	out := (*C.char)(C.malloc(C.size_t(size + 1)))
	defer C.free(unsafe.Pointer(out))
	guard := unsafe.Slice((*byte)(unsafe.Pointer(out)), size+1)
	guard[size] = 0xa5
	C.sh_hints(in, out, C.size_t(size))
	return C.GoString(out), guard[size] == 0xa5
}
