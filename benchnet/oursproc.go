package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// oursCluster is three `lease-node serve` members on 127.0.0.1 with peer
// TLS, started by scripts/cluster.sh exactly as a person starts them
// (its state in a directory of this run, CLUSTER_STATE_DIR, so that a
// cluster of the person's own is left alone).
type oursCluster struct {
	repo, state string
	env         []string
	endpoints   []string
}

// upOurs runs `scripts/cluster.sh up 3 FLAGS...` and reads ENDPOINTS=.
func upOurs(repo, state string, env []string, pids *pidFile, flags ...string) (*oursCluster, error) {
	c := &oursCluster{repo: repo, state: state, env: append(os.Environ(), append([]string{"CLUSTER_STATE_DIR=" + state}, env...)...)}
	out, err := c.script(append([]string{"up", "3"}, flags...)...)
	if err != nil {
		c.down()
		return nil, err
	}
	m := regexp.MustCompile(`(?m)^ENDPOINTS=(\S+)$`).FindStringSubmatch(out)
	if m == nil {
		c.down()
		return nil, fmt.Errorf("scripts/cluster.sh up printed no ENDPOINTS= line:\n%s", out)
	}
	c.endpoints = strings.Split(m[1], ",")
	ids, err := c.pids()
	if err != nil {
		c.down()
		return nil, err
	}
	for id, pid := range ids {
		pids.add(pid, "lease-node "+id)
	}
	return c, nil
}

// script runs scripts/cluster.sh with args and returns its output.
func (c *oursCluster) script(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(c.repo, "scripts", "cluster.sh"), args...)
	cmd.Env = c.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("scripts/cluster.sh %s: %v:\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// down stops the members (SIGTERM, so that profiles are written).
func (c *oursCluster) down() error {
	_, err := c.script("down")
	return err
}

// pids maps member id (n1, n2, n3) to PID.
func (c *oursCluster) pids() (map[string]int, error) {
	out, err := c.script("pids")
	if err != nil {
		return nil, err
	}
	ids := map[string]int{}
	s := bufio.NewScanner(strings.NewReader(out))
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) != 2 {
			continue
		}
		pid, err := strconv.Atoi(f[1])
		if err != nil {
			return nil, fmt.Errorf("scripts/cluster.sh pids: %q", s.Text())
		}
		ids[f[0]] = pid
	}
	return ids, nil
}

// bin is the member binary cluster.sh built.
func (c *oursCluster) bin() string { return filepath.Join(c.state, "lease-node") }

// kill sends SIGKILL to member id (n1, n2, n3) and waits until it is gone.
func (c *oursCluster) kill(id string) error {
	ids, err := c.pids()
	if err != nil {
		return err
	}
	pid, ok := ids[id]
	if !ok {
		return fmt.Errorf("no member %s", id)
	}
	if err := killPID(pid, c.bin()); err != nil {
		return err
	}
	if !waitUntil(10*time.Second, func() bool { return !isProgram(pid, c.bin()) }) {
		return fmt.Errorf("%s (pid %d) still runs 10 s after SIGKILL", id, pid)
	}
	return nil
}

// restart starts member id again with the default boot wait and waits
// until it is ready (cluster.sh restart); it records the new PID.
func (c *oursCluster) restart(id string, pids *pidFile) error {
	if _, err := c.script("restart", id); err != nil {
		return err
	}
	ids, err := c.pids()
	if err != nil {
		return err
	}
	pids.add(ids[id], "lease-node "+id)
	return nil
}

// metrics reads member i's /metrics and returns the samples without
// labels (name -> value), which is what the memory figures need.
func (c *oursCluster) metrics(ctx context.Context, i int) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoints[i]+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || strings.HasPrefix(line, "#") || strings.Contains(f[0], "{") {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out, nil
}
