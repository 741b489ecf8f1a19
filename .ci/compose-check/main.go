// Command compose-check loads compose.yaml with compose-go (the loader Docker Compose itself uses), so
// the file is validated against the Compose schema without a Docker engine, and then enforces the
// project's own rules (ADR-0101):
//
//   - every image has an explicit tag other than "latest" (or a digest);
//   - every long-running service has a healthcheck; one-shot services say so with `x-one-shot: true`;
//   - every depends_on entry is written in long form with an explicit condition;
//   - every service has a CPU and a memory limit;
//   - bind-mounted files and build contexts exist in the repository;
//   - every Redis runs redis-server with the repository's redis/redis.conf (ADR 0100), bind-mounted;
//   - a variable that holds a secret (its name has PASSWORD, TOKEN or SECRET in it) has no default: a default
//     would be a publicly known credential. It is required (${NAME:?message}) instead, and loaded here with a
//     placeholder when the environment has no value.
//
// It prints the services it found and exits non-zero on any load error or rule violation.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/distribution/reference"
	"go.yaml.in/yaml/v4"
)

// oneShotKey marks a service that runs to completion (a job, a load test) rather than staying up.
const oneShotKey = "x-one-shot"

func main() {
	root := flag.String("root", "", "repository root (default: nearest parent directory holding compose.yaml)")
	file := flag.String("file", "compose.yaml", "compose file, relative to -root")
	flag.Parse()

	if err := run(*root, *file); err != nil {
		fmt.Fprintln(os.Stderr, "compose-check:", err)
		os.Exit(1)
	}
}

func run(root, file string) error {
	if root == "" {
		found, err := findRoot(file)
		if err != nil {
			return err
		}
		root = found
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	path := filepath.Join(root, file)
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	problems := checkSecrets(string(raw))
	placeholdRequired(string(raw))

	// Load once with every profile enabled (the set the rules apply to) and once with none, which is
	// what a plain `docker compose up` sees: a dependency on a profile-only service must still resolve.
	all, err := load(path, root, []string{"*"})
	if err != nil {
		return fmt.Errorf("loading %s with all profiles: %w", file, err)
	}
	if _, err := load(path, root, nil); err != nil {
		return fmt.Errorf("loading %s with the default profile: %w", file, err)
	}
	for _, profile := range all.AllServices().GetProfiles() {
		if _, err := load(path, root, []string{profile}); err != nil {
			return fmt.Errorf("loading %s with profile %q: %w", file, profile, err)
		}
	}

	var model struct {
		Services map[string]struct {
			DependsOn any `yaml:"depends_on"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &model); err != nil {
		return fmt.Errorf("parsing %s: %w", file, err)
	}

	names := all.ServiceNames()
	sort.Strings(names)
	fmt.Printf("%s: project %q, %d services\n", file, all.Name, len(names))
	for _, name := range names {
		service := all.Services[name]
		fmt.Println("  " + describe(service))
		problems = append(problems, checkImage(service)...)
		problems = append(problems, checkHealth(service)...)
		problems = append(problems, checkLimits(service)...)
		problems = append(problems, checkPaths(service, root)...)
		problems = append(problems, checkRedisConfig(service, root)...)
		problems = append(problems, checkConditions(name, model.Services[name].DependsOn)...)
	}

	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "  FAIL "+p)
		}
		return fmt.Errorf("%d problem(s) in %s", len(problems), file)
	}
	fmt.Println("compose-check: OK")
	return nil
}

func load(path, root string, profiles []string) (*types.Project, error) {
	options, err := cli.NewProjectOptions([]string{path},
		cli.WithWorkingDirectory(root),
		cli.WithOsEnv,
		cli.WithDotEnv,
		cli.WithInterpolation(true),
		cli.WithResolvedPaths(true),
		cli.WithProfiles(profiles),
	)
	if err != nil {
		return nil, err
	}
	return options.LoadProject(context.Background())
}

// secretDefault matches ${NAME:-default} and ${NAME-default} where NAME names a secret.
var secretDefault = regexp.MustCompile(`\$\{([A-Za-z0-9_]*(?:PASSWORD|TOKEN|SECRET)[A-Za-z0-9_]*):?-`)

// required matches ${NAME:?message} and ${NAME?message}.
var required = regexp.MustCompile(`\$\{([A-Za-z0-9_]+):?\?`)

func checkSecrets(raw string) []string {
	var problems []string
	for _, m := range secretDefault.FindAllStringSubmatch(raw, -1) {
		problems = append(problems, fmt.Sprintf("secret %s has a default; require it with ${%s:?...}", m[1], m[1]))
	}
	return problems
}

// placeholdRequired gives every required variable the environment lacks a value, so the file loads; the check
// is about the file, not about one machine's environment.
func placeholdRequired(raw string) {
	for _, m := range required.FindAllStringSubmatch(raw, -1) {
		if _, set := os.LookupEnv(m[1]); !set {
			os.Setenv(m[1], "compose-check-placeholder")
		}
	}
}

func findRoot(file string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, file)); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no %s in the working directory or its parents; pass -root", file)
		}
		dir = parent
	}
}

func describe(s types.ServiceConfig) string {
	image := s.Image
	if s.Build != nil {
		image += " [build " + s.Build.Dockerfile + "]"
	}
	health := "healthcheck"
	if isOneShot(s) {
		health = "one-shot"
	}
	var deps []string
	for name, dep := range s.DependsOn {
		deps = append(deps, name+":"+dep.Condition)
	}
	sort.Strings(deps)
	line := fmt.Sprintf("%-15s %-52s %-11s cpus=%-4g mem=%-6s", s.Name, image, health, s.CPUS, units(int64(s.MemLimit)))
	if len(s.Profiles) > 0 {
		line += " profiles=" + strings.Join(s.Profiles, ",")
	}
	if len(deps) > 0 {
		line += " depends_on=" + strings.Join(deps, ",")
	}
	return line
}

func units(b int64) string {
	switch {
	case b == 0:
		return "-"
	case b%(1<<30) == 0:
		return fmt.Sprintf("%dg", b>>30)
	default:
		return fmt.Sprintf("%dm", b>>20)
	}
}

func isOneShot(s types.ServiceConfig) bool {
	v, ok := s.Extensions[oneShotKey].(bool)
	return ok && v
}

func checkImage(s types.ServiceConfig) []string {
	if s.Image == "" {
		if s.Build == nil {
			return []string{s.Name + ": neither image nor build"}
		}
		return []string{s.Name + ": built image needs an explicit image name and tag"}
	}
	ref, err := reference.ParseNormalizedNamed(s.Image)
	if err != nil {
		return []string{fmt.Sprintf("%s: image %q: %v", s.Name, s.Image, err)}
	}
	if _, ok := ref.(reference.Digested); ok {
		return nil
	}
	tagged, ok := ref.(reference.Tagged)
	if !ok {
		return []string{fmt.Sprintf("%s: image %q has no tag (means latest); pin a version", s.Name, s.Image)}
	}
	if tagged.Tag() == "latest" {
		return []string{fmt.Sprintf("%s: image %q uses latest; pin a version", s.Name, s.Image)}
	}
	return nil
}

func checkHealth(s types.ServiceConfig) []string {
	hc := s.HealthCheck
	hasCheck := hc != nil && !hc.Disable && len(hc.Test) > 0 && hc.Test[0] != "NONE"
	if isOneShot(s) {
		if s.Restart != "" && s.Restart != types.RestartPolicyNo {
			return []string{fmt.Sprintf("%s: one-shot service with restart %q", s.Name, s.Restart)}
		}
		return nil
	}
	if !hasCheck {
		return []string{s.Name + ": long-running service without a healthcheck (or mark it " + oneShotKey + ": true)"}
	}
	return nil
}

func checkLimits(s types.ServiceConfig) []string {
	var problems []string
	var cpus float32 = s.CPUS
	mem := int64(s.MemLimit)
	if s.Deploy != nil && s.Deploy.Resources.Limits != nil {
		if cpus == 0 {
			cpus = float32(s.Deploy.Resources.Limits.NanoCPUs.Value())
		}
		if mem == 0 {
			mem = int64(s.Deploy.Resources.Limits.MemoryBytes)
		}
	}
	if cpus <= 0 {
		problems = append(problems, s.Name+": no CPU limit (cpus or deploy.resources.limits.cpus)")
	}
	if mem <= 0 {
		problems = append(problems, s.Name+": no memory limit (mem_limit or deploy.resources.limits.memory)")
	}
	return problems
}

// checkPaths catches a typo in a bind mount: Docker would silently create an empty directory there.
func checkPaths(s types.ServiceConfig, root string) []string {
	var problems []string
	for _, v := range s.Volumes {
		if v.Type != types.VolumeTypeBind {
			continue
		}
		if _, err := os.Stat(v.Source); errors.Is(err, os.ErrNotExist) {
			problems = append(problems, fmt.Sprintf("%s: bind mount source %s does not exist", s.Name, rel(root, v.Source)))
		}
	}
	if s.Build != nil {
		dockerfile := s.Build.Dockerfile
		if !filepath.IsAbs(dockerfile) {
			dockerfile = filepath.Join(s.Build.Context, dockerfile)
		}
		if _, err := os.Stat(dockerfile); err != nil {
			problems = append(problems, fmt.Sprintf("%s: Dockerfile %s not found", s.Name, rel(root, dockerfile)))
		}
	}
	return problems
}

// checkRedisConfig: a Redis with settings of its own could evict what invalidation rests on (ADR 0100).
func checkRedisConfig(s types.ServiceConfig, root string) []string {
	ref, err := reference.ParseNormalizedNamed(s.Image)
	if err != nil || reference.Path(ref) != "library/redis" {
		return nil
	}
	conf := filepath.Join(root, "redis", "redis.conf")
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind && v.Source == conf {
			if len(s.Command) >= 2 && s.Command[0] == "redis-server" && s.Command[1] == v.Target {
				return nil
			}
			return []string{fmt.Sprintf("%s: command does not start with redis-server %s", s.Name, v.Target)}
		}
	}
	return []string{s.Name + ": redis/redis.conf is not bind-mounted"}
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

// checkConditions reads the file as written: the loader turns the short form `depends_on: [db]` into
// condition service_started, which would hide a dependency that does not wait for readiness. (The long
// form without a condition is a schema error, reported by the loader.)
func checkConditions(service string, dependsOn any) []string {
	switch dependsOn.(type) {
	case nil:
		return nil
	case []any:
		return []string{service + ": depends_on in short form; use `name: {condition: ...}`"}
	case map[string]any:
		// Long form: the Compose schema already rejects an entry without condition.
		return nil
	default:
		return []string{fmt.Sprintf("%s: unexpected depends_on %T", service, dependsOn)}
	}
}
