package jail

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// The record Go writes when jail fails before the runner starts keeps its
// bytes: the fields every record has, in the runner's order, and the error;
// nothing only the runner can know.
func TestNewStatusBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  *Config
		want string
	}{
		{"no profile loaded", nil,
			`{"version":1,"exit_code":125,"signal":0,"timed_out":false,"oom_killed":false,"pids_limit_hit":false,` +
				`"cpu_time_exceeded":false,"file_too_large":false,"output_truncated":false,"disk_limit_hit":false,"disk_reserve_hit":false,"wall_ms":0,"setup_ms":0,` +
				`"cpu_user_ms":0,"cpu_system_ms":0,"plan_cached":false,"profile":"","profile_hash":"","error":"load profile: \"x\u003cy\""}` + "\n"},
		{"a profile", &Config{Profile: "default", ProfileHash: "ab12"},
			`{"version":1,"exit_code":125,"signal":0,"timed_out":false,"oom_killed":false,"pids_limit_hit":false,` +
				`"cpu_time_exceeded":false,"file_too_large":false,"output_truncated":false,"disk_limit_hit":false,"disk_reserve_hit":false,"wall_ms":0,"setup_ms":0,` +
				`"cpu_user_ms":0,"cpu_system_ms":0,"plan_cached":false,"profile":"default","profile_hash":"ab12","error":"load profile: \"x\u003cy\""}` + "\n"},
	} {
		got := NewStatus(tc.cfg, nil, errors.New(`load profile: "x<y"`)).JSON()
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		// And it reads back strictly into the type it was written from.
		dec := json.NewDecoder(bytes.NewReader(got))
		dec.DisallowUnknownFields()
		var st Status
		if err := dec.Decode(&st); err != nil || st.ExitCode != 125 || st.Error == "" {
			t.Errorf("%s: read back: %v %+v", tc.name, err, st)
		}
	}
}
