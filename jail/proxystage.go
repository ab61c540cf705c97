package jail

// The allowlist proxy's stage, Go's own: the runner starts the proxy as
// this program again with _JAIL_STAGE=proxy, and entry.c's constructor
// returns to Go for it. It is served here, before any main, so every
// program that links the runner serves it: jail's CLI, and a service that
// runs jails through sandbox.Run (whose main would otherwise run instead).

import (
	"os"

	"github.com/jail-sandbox/jail/proxy"
)

func init() {
	if os.Getenv("_JAIL_STAGE") == "proxy" {
		proxy.Main(os.Args) // never returns
	}
}
