package policyfile

import (
	"reflect"
	"testing"
)

// fuzzSeed is a policy file using every key once.
const fuzzSeed = `description = "d"
default = "allow"
[[rule]]
syscalls = ["personality"]
action = "trap"
comment = "c"
[[rule.arg]]
index = 0
op = "ne"
value = "0xffffffffffffffff"
`

// FuzzPolicy decodes arbitrary bytes as a policy file: every problem must
// be located, what decodes cleanly must pass the policy model's own Check,
// and survive Encode and a second decode unchanged.
func FuzzPolicy(f *testing.F) {
	f.Add([]byte(fuzzSeed))
	f.Add([]byte("extends = \"default\"\nrule = [{ syscalls = [\"@mount\"], action = { errno = \"EPERM\" }, arg = [{ index = 1, op = \"masked_eq\", value = 1, mask = 0xff }] }]\n"))
	f.Add([]byte("default = { errno = 38 }\n[[rule]]\nsyscalls = [\"read\", \"sendmsg\", \"chdir\", \"execve\", \"exit\", \"exit_group\"]\naction = \"allow\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, probs := decode("fuzz.toml", data)
		if l == nil {
			return
		}
		for _, p := range probs {
			if p.Line == 0 {
				t.Errorf("policy problem not located: %v\n%q", p, data)
			}
		}
		if len(probs) > 0 {
			return
		}
		p, err := merge("fuzz", []*layer{l}, nil) // its extends not followed
		if err != nil {
			return
		}
		if errs := p.Check(); len(errs) > 0 {
			t.Fatalf("policy decoded without problems, but Check says: %v\n%q", errs, data)
		}
		enc := Encode(p)
		back, probs := decode("encoded", enc)
		if len(probs) > 0 {
			t.Fatalf("Encode's output does not load: %v\n%s", probs, enc)
		}
		if again, err := merge("fuzz", []*layer{back}, nil); err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("policy round trip changed it: %v\n%+v\n%+v\n%s", err, p, again, enc)
		}
	})
}
