//go:build clockfault

package clock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// FaultsBuiltIn is true: this build takes clock faults from its
// environment and from LEASE_CLOCK_FILE.
const FaultsBuiltIn = true

// FromEnv returns clocks skewed as LEASE_CLOCK_OFFSET_MS and
// LEASE_CLOCK_RATE say, following LEASE_CLOCK_FILE while the process runs
// (call Stop to end that). notes says what was applied, for the log; err
// names a bad value.
func FromEnv(getenv func(string) string) (c *Clock, notes []string, err error) {
	s := Setting{Rate: 1}
	if v := strings.TrimSpace(getenv(EnvOffsetMs)); v != "" {
		if s.OffsetMs, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, nil, fmt.Errorf("%s is %q; want a whole number of milliseconds, e.g. 30000 or -500", EnvOffsetMs, v)
		}
	}
	if v := strings.TrimSpace(getenv(EnvRate)); v != "" {
		if s.Rate, err = strconv.ParseFloat(v, 64); err != nil {
			return nil, nil, fmt.Errorf("%s is %q; want a positive factor, e.g. 1.001 or 0.5", EnvRate, v)
		}
	}
	if err := s.check(); err != nil {
		return nil, nil, err
	}
	c = Real()
	c.skew.Store(&skew{rate: 1, changed: make(chan struct{})}) // this clock can change: timers must watch it
	c.set(time.Duration(s.OffsetMs)*time.Millisecond, s.Rate)
	notes = append(notes, fmt.Sprintf("clockfault build: wall clock offset %d ms, rate %g", s.OffsetMs, s.Rate))
	if path := getenv(EnvFile); path != "" {
		// Read it once now, so a process restarted with a skew in force
		// starts skewed: its first wall-clock read (the incarnation, the
		// ballot floor) already sees it.
		first, _ := os.ReadFile(path)
		c.apply(first)
		c.stop = make(chan struct{})
		c.done = make(chan struct{})
		go c.follow(path, first)
		notes = append(notes, FollowingNote(path))
	}
	return c, notes, nil
}

// check refuses settings no clock could have.
func (s Setting) check() error {
	if math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0) || s.Rate <= 0 || s.Rate > 1000 {
		return fmt.Errorf("clock rate %v is out of range; want a factor in (0, 1000], 1 = true time", s.Rate)
	}
	const year = 365 * 24 * 3600 * 1000
	if s.OffsetMs < -100*year || s.OffsetMs > 100*year {
		return fmt.Errorf("clock offset %d ms is more than 100 years", s.OffsetMs)
	}
	return nil
}

// follow polls the control file until Stop, applying each new setting. A
// file that is missing or does not parse changes nothing (the harness
// writes it whole, by rename).
func (c *Clock) follow(path string, last []byte) {
	defer close(c.done)
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil && !bytes.Equal(b, last) {
			last = b
			c.apply(b)
		}
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
	}
}

// apply takes a control file's content; one that does not parse or names
// an impossible clock changes nothing.
func (c *Clock) apply(b []byte) {
	var s Setting
	if len(b) > 0 && json.Unmarshal(b, &s) == nil && s.check() == nil {
		c.set(time.Duration(s.OffsetMs)*time.Millisecond, s.Rate)
	}
}

// Stop ends the control file's polling and waits for it.
func (c *Clock) Stop() {
	if c.stop != nil {
		close(c.stop)
		<-c.done
		c.stop = nil
	}
}
