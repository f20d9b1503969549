//go:build clockfault

package clock

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnvAppliesOffsetAndRate(t *testing.T) {
	c, notes, err := FromEnv(env(map[string]string{EnvOffsetMs: "-30000", EnvRate: "1.5"}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if off, rate := c.Skew(); off != -30*time.Second || rate != 1.5 {
		t.Fatalf("Skew = %v, %v (notes %q)", off, rate, notes)
	}
	if d := time.Until(c.Wall()); d > -29*time.Second || d < -31*time.Second {
		t.Fatalf("Wall is %v from now, want about -30 s", d)
	}
}

func TestFromEnvRefusesBadValues(t *testing.T) {
	for _, m := range []map[string]string{
		{EnvOffsetMs: "1.5"}, {EnvRate: "0"}, {EnvRate: "-1"}, {EnvRate: "fast"}, {EnvRate: "NaN"},
	} {
		if _, _, err := FromEnv(env(m)); err == nil {
			t.Errorf("FromEnv(%v) accepted a bad value", m)
		}
	}
}

// TestControlFileChangesARunningClock rewrites the control file and waits
// (bounded) for the clock to follow it, as a harness does.
func TestControlFileChangesARunningClock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clock.json")
	c, _, err := FromEnv(env(map[string]string{EnvFile: path}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	changed := c.Changed()
	write(t, path, Setting{OffsetMs: 5000, Rate: 3})
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("the clock did not follow the control file within 5 s")
	}
	if off, rate := c.Skew(); off != 5*time.Second || rate != 3 {
		t.Fatalf("Skew = %v, %v after the file said 5000 ms, 3", off, rate)
	}
	changed = c.Changed()
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, path, Setting{OffsetMs: 0, Rate: 1})
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("the clock did not follow the second setting")
	}
	if off, rate := c.Skew(); off != 0 || rate != 1 {
		t.Fatalf("Skew = %v, %v after reset", off, rate)
	}
}

func write(t *testing.T, path string, s Setting) {
	t.Helper()
	b, _ := json.Marshal(s)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestControlFileAppliesAtStart: a process started while a skew is in
// force reads it before FromEnv returns, so its first wall-clock read is
// skewed already.
func TestControlFileAppliesAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clock.json")
	write(t, path, Setting{OffsetMs: -30000, Rate: 0.5})
	c, _, err := FromEnv(env(map[string]string{EnvFile: path}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if off, rate := c.Skew(); off != -30*time.Second || rate != 0.5 {
		t.Fatalf("Skew = %v, %v right after FromEnv, want -30s, 0.5", off, rate)
	}
}
