package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const valid = `
name: check-test
services:
  cache:
    image: redis:7.0.15
    command: ["redis-server", "/usr/local/etc/redis/redis.conf"]
    volumes:
      - ./redis/redis.conf:/usr/local/etc/redis/redis.conf:ro
    healthcheck:
      test: ["CMD", "redis-cli", "ping"]
    cpus: 0.5
    mem_limit: 256m
  job:
    image: busybox:1.36
    profiles: [tools]
    x-one-shot: true
    command: ["true"]
    cpus: 0.1
    mem_limit: 16m
  app:
    image: busybox:1.36
    environment:
      APP_ADMIN_TOKEN: ${CHECK_ADMIN_TOKEN:?set CHECK_ADMIN_TOKEN}
    healthcheck:
      test: ["CMD", "true"]
    depends_on:
      cache:
        condition: service_healthy
      job:
        condition: service_completed_successfully
        required: false
    cpus: 0.5
    mem_limit: 64m
`

func TestRun(t *testing.T) {
	cases := []struct {
		name, from, to, want string
	}{
		{"valid", "", "", ""},
		{"latest tag", "redis:7.0.15", "redis:latest", "uses latest"},
		{"no tag", "redis:7.0.15", "redis", "has no tag"},
		{"missing healthcheck", "    healthcheck:\n      test: [\"CMD\", \"true\"]\n", "", "without a healthcheck"},
		{"short depends_on", "    depends_on:\n      cache:\n        condition: service_healthy\n      job:\n" +
			"        condition: service_completed_successfully\n        required: false\n",
			"    depends_on: [cache]\n", "short form"},
		{"no condition", "        condition: service_healthy\n", "        restart: true\n", "missing property 'condition'"},
		{"schema", "    cpus: 0.1\n", "    cpus: 0.1\n    helthcheck: {}\n", "validating"},
		{"missing bind source", "./redis/redis.conf", "./redis/redis.cnf", "does not exist"},
		{"redis without the repository's redis.conf", "./redis/redis.conf", "./other.conf", "not bind-mounted"},
		{"redis started without its file", `command: ["redis-server", "/usr/local/etc/redis/redis.conf"]`,
			`command: ["redis-server", "--maxmemory-policy", "allkeys-lfu"]`, "does not start with redis-server"},
		{"secret with a default", "${CHECK_ADMIN_TOKEN:?set CHECK_ADMIN_TOKEN}", "${CHECK_ADMIN_TOKEN:-admin}",
			"CHECK_ADMIN_TOKEN has a default"},
		{"required profile dependency", "        required: false\n", "", "default profile"},
		{"no memory limit", "    mem_limit: 16m\n", "", "no memory limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			content := valid
			if c.from != "" {
				if !strings.Contains(content, c.from) {
					t.Fatalf("test setup: %q not in the compose file", c.from)
				}
				content = strings.Replace(content, c.from, c.to, 1)
			}
			write(t, filepath.Join(root, "compose.yaml"), content)
			write(t, filepath.Join(root, "redis", "redis.conf"), "maxmemory 1mb\n")
			write(t, filepath.Join(root, "other.conf"), "maxmemory 1mb\n")

			err := captureStderr(t, func() error { return run(root, "compose.yaml") })
			if c.want == "" {
				if err != nil {
					t.Fatalf("want success, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// captureStderr runs f and folds the FAIL lines run prints into the returned error's text.
func captureStderr(t *testing.T, f func() error) error {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	runErr := f()
	os.Stderr = saved
	w.Close()
	out, _ := io.ReadAll(r)
	if runErr == nil {
		return nil
	}
	return &combined{runErr, string(out)}
}

type combined struct {
	err    error
	stderr string
}

func (c *combined) Error() string { return c.err.Error() + "\n" + c.stderr }
