package sandbox

// Prepare: the one sequence from a profile and a run's changes to what
// planning needs (load, overrides, config, secrets, hash, plan options),
// for Run and for the jail CLI alike.

import (
	"errors"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/jail-sandbox/jail/credential"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/plancache"
	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/secrets"
)

// Prepared is one run made ready to plan.
type Prepared struct {
	// Profile is the run's own copy of the profile, its overrides applied.
	Profile *profiles.Profile
	// Config is the jail: the command, its environment (the secrets
	// file's keys included), mounts, limits, network, seccomp.
	Config jail.Config
	// Options are the rest of what planning needs; Version is the
	// library's, for the audit log (the CLI puts its own).
	Options jail.PlanOptions
}

// Prepare readies a run of argv under profile, changed by o: it loads the
// profile (or copies the Value), applies o, builds the Config, puts the
// secrets into the command's environment (nowhere else: not the host's
// variables, not a cached plan) and hashes the profile. env is the caller's
// environment, read only for what env.keep names and for HOME ("~/").
//
// When a step after the overrides fails, Prepare returns the run as far as
// it got with the error: the Profile, and the Config once made (the CLI's
// status record names the profile it failed in).
func Prepare(profile Profile, o profiles.Overrides, argv, env []string) (*Prepared, error) {
	p, err := profile.load(env)
	if err != nil {
		return nil, err
	}
	// A copy: the caller's Value serves other runs, perhaps at once.
	p = p.Clone()
	if err := p.Apply(o); err != nil {
		return nil, err
	}
	r := &Prepared{Profile: p, Options: planOptions()}
	cfg, err := p.Config(argv, env)
	if err != nil {
		return r, err
	}
	r.Config = cfg
	if err := r.secrets(p); err != nil {
		return r, err
	}
	r.Config.ProfileHash = p.Hash()
	return r, nil
}

// secrets puts the secrets file's keys into the command's environment,
// all but the bound ones, whose real values only the network helper gets
// (credential.Arm): the jail sees their placeholders.
func (r *Prepared) secrets(p *profiles.Profile) error {
	var kv map[string]string
	if p.Secrets.File != "" {
		var err error
		if kv, err = secrets.Read(p.Secrets.File); err != nil {
			return err
		}
	}
	bindings := make([]credential.Binding, len(p.Credentials))
	bound := map[string]bool{}
	for i, c := range p.Credentials {
		bindings[i] = credential.Binding{Env: c.Env, Hosts: c.Hosts, Header: c.Header}
		bound[c.Env] = true
	}
	for _, k := range secrets.Keys(kv) {
		if !bound[k] {
			r.Config.Env = append(r.Config.Env, k+"="+kv[k])
			r.Config.SecretKeys = append(r.Config.SecretKeys, k)
		}
	}
	return credential.Arm(&r.Config, bindings, kv, p.Secrets.File, p.Network.UpstreamCA, time.Now())
}

// Plan resolves the run against the host (mount sources, who the caller
// is): everything that can fail before the jail exists fails here.
func (r *Prepared) Plan() (*jail.Plan, error) {
	return jail.NewPlan(r.Config, r.Options)
}

// load is the profile as Profile names it.
func (pr Profile) load(env []string) (*profiles.Profile, error) {
	if pr.Value != nil {
		return pr.Value, nil
	}
	name := pr.Name
	if pr.File != "" {
		name = pr.File
	}
	if name == "" {
		return nil, errors.New("sandbox: no profile: give a Name, a File or a Value")
	}
	return profiles.Load(name, profiles.Options{SearchPath: profiles.DefaultSearchPath(env)})
}

// planOptions are the CLI's and the library's alike: no writable bind may
// reach jail's own state; compiled filters are kept beside it.
func planOptions() jail.PlanOptions {
	version := "sandbox"
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = "sandbox " + bi.Main.Version
	}
	where := plancache.Where(plancache.SelfEnv())
	return jail.PlanOptions{
		Protected:    where.Guarded(),
		SeccompCache: filepath.Join(where.Dir(), "seccomp"),
		Version:      version,
	}
}
