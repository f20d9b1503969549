package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"chunklease/maelstrom/netsim"
)

// StoredRun is what a stored results.json tells about its run beyond
// the history.
type StoredRun struct {
	Workload string `json:"workload"`
	Network  string `json:"network"` // "" in runs stored before networks were named: the simulated one
	// NetworkObserved is kept as the live run wrote it.
	NetworkObserved json.RawMessage `json:"network_observed"`
	Error           *string         `json:"error"`
	Command         []string        `json:"command"`
	Config          json.RawMessage `json:"config"`
	Seed            uint64          `json:"seed"`
	Started         time.Time       `json:"started"`
	DurationS       float64         `json:"duration_s"`
	Final           FinalPhase      `json:"final"`
	Net             struct {
		All          *netsim.Counts `json:"all"` // nil: the network did not count messages
		Clients      *netsim.Counts `json:"clients"`
		Servers      *netsim.Counts `json:"servers"`
		StrayReplies int64          `json:"stray_replies"`
	} `json:"net"`
	Nemesis      NemesisResult      `json:"nemesis"`
	Availability AvailabilityResult `json:"availability"`
	Timing       Timing             `json:"timing"`
	Memory       Memory             `json:"memory"`
}

// ReadStoredRun reads dir/results.json.
func ReadStoredRun(dir string) (*StoredRun, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, fmt.Errorf("%s is not a stored run: %w", dir, err)
	}
	var s StoredRun
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s/results.json: %w", dir, err)
	}
	if s.Workload == "" {
		return nil, fmt.Errorf("%s/results.json names no workload", dir)
	}
	return &s, nil
}
