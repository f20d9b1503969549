package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// storeTimeLayout names a run directory like Jepsen's basic-date-time:
// 20250207T160331.972-0500.
const storeTimeLayout = "20060102T150405.000-0700"

// makeRunDir creates <base>/<workload>/<timestamp>/ with its node-logs/
// subdirectory, and points <base>/current at it. Two runs started in the
// same millisecond get a -1, -2, ... suffix.
func makeRunDir(base, workload string, at time.Time) (string, error) {
	parent := filepath.Join(base, workload)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("creating the store: %w", err)
	}
	name := at.Format(storeTimeLayout)
	for i := 1; ; i++ {
		err := os.Mkdir(filepath.Join(parent, name), 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return "", fmt.Errorf("creating the run directory: %w", err)
		}
		name = fmt.Sprintf("%s-%d", at.Format(storeTimeLayout), i)
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(filepath.Join(dir, "node-logs"), 0o755); err != nil {
		return "", err
	}
	if err := symlink(filepath.Join(workload, name), filepath.Join(base, "current")); err != nil {
		return "", err
	}
	return dir, nil
}

// linkLatest points <base>/latest and <base>/<workload>/latest at a
// finished run, as Jepsen does.
func linkLatest(base, dir string) error {
	workload, name := filepath.Base(filepath.Dir(dir)), filepath.Base(dir)
	if err := symlink(filepath.Join(workload, name), filepath.Join(base, "latest")); err != nil {
		return err
	}
	return symlink(name, filepath.Join(base, workload, "latest"))
}

// symlink makes link point at the relative target, replacing any old
// link atomically (a new link under a temporary name, then rename).
func symlink(target, link string) error {
	tmp := fmt.Sprintf("%s.tmp-%d", link, os.Getpid())
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return fmt.Errorf("linking %s: %w", link, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("linking %s: %w", link, err)
	}
	return nil
}
