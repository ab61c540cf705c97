package profiles_test

import (
	"fmt"
	"log"

	"github.com/jail-sandbox/jail/profiles"
)

// Example shows what the CLI does for `jail -p agent --workspace proj -- CMD`:
// load the profile, apply the flags, build the run's configuration.
func Example() {
	p, err := profiles.Load("agent", profiles.Options{}) // built-ins only, for a stable example
	if err != nil {
		log.Fatal(err)
	}
	err = p.Apply(profiles.Overrides{Workspace: "proj", Cwd0: "/home/me"})
	if err != nil {
		log.Fatal(err)
	}
	hostEnv := []string{"HOME=/home/me", "AWS_SECRET_ACCESS_KEY=not-for-the-jail"}
	c, err := p.Config([]string{"make", "test"}, hostEnv)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Argv, c.Dir, c.UID)
	for _, e := range c.Env {
		fmt.Println(e)
	}
	ws := c.Mounts[len(c.Mounts)-4] // then the generated /etc/resolv.conf, /etc/passwd and /etc/group
	fmt.Println(ws.Kind, ws.Src, ws.Dst)
	// Output:
	// [make test] /workspace 1000
	// HOME=/workspace
	// LANG=C.UTF-8
	// PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin
	// PIP_RETRIES=0
	// npm_config_fetch_retries=0
	// bind /home/me/proj /workspace
}

// ExampleLoad shows the report for a broken profile: every problem at once,
// each with its file, line, column and key.
func ExampleLoad() {
	_, err := profiles.Load("testdata/typo.wrong", profiles.Options{})
	fmt.Println(err)
	// Output:
	// testdata/typo.wrong:4:1: hostnme: unknown key, did you mean "hostname"?
	// testdata/typo.wrong:9:1: mount[1].sise: unknown key, did you mean "size"?
	// testdata/typo.wrong:12:1: limits.nofiles: unknown key, did you mean "nofile"?
}
