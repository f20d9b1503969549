package report

import (
	"fmt"

	"chunklease/workloads/lease"
	"chunklease/workloads/master"
)

// DrawPictures draws into dir the pictures a workload's analysis gathered
// (workloads.Analyzed.Pictures), in order: a lease.TimelineInput is the
// lease timeline (LeaseTimelineFile), a master.TimelineInput the master
// timeline (MasterTimelineFile). It returns the files drawn and, for
// each picture that could not be, a warning: a picture costs the reader a
// page, never the verdict. A picture of a kind it does not know is a
// warning too.
func DrawPictures(dir string, pictures []any) (files, warnings []string) {
	for _, p := range pictures {
		var name string
		var err error
		switch in := p.(type) {
		case lease.TimelineInput:
			name, err = LeaseTimelineFile, WriteLeaseTimelineFile(dir, in)
		case master.TimelineInput:
			name, err = MasterTimelineFile, WriteMasterTimelineFile(dir, in)
		default:
			name, err = fmt.Sprintf("a %T", p), fmt.Errorf("package report draws no such picture")
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s could not be written: %v", name, err))
			continue
		}
		files = append(files, name)
	}
	return files, warnings
}
