//go:build !clockfault

package clock

// FaultsBuiltIn is false: this build reads the machine's clocks unchanged.
const FaultsBuiltIn = false

// FromEnv returns the machine's clocks. The clock-fault variables are
// ignored in this build; notes names each one that is set, so that the
// caller can log that it had no effect.
func FromEnv(getenv func(string) string) (c *Clock, notes []string, err error) {
	for _, v := range Variables {
		if getenv(v) != "" {
			notes = append(notes, IgnoredNote(v))
		}
	}
	return Real(), notes, nil
}

// Stop ends the control file's polling; nothing to stop in this build.
func (c *Clock) Stop() {}
