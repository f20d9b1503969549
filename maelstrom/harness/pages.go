package harness

import (
	"os"
	"path/filepath"

	"chunklease/history"
	"chunklease/report"
	"chunklease/workloads"
)

// drawPictures has package report draw what the workload's analysis
// gathered for pictures (the lease timeline) and lists the files drawn in
// res.Reports; a picture that cannot be drawn is a warning.
func (r *runner) drawPictures(res *report.Results, pictures []any) {
	files, warnings := report.DrawPictures(r.dir, pictures)
	res.Reports = append(res.Reports, files...)
	for _, w := range warnings {
		r.console.println("WARN " + w)
	}
}

// writeReport writes the message diagram and the index page into the run
// directory and lists them in res.Reports. Neither can change the
// verdict: a failure is a warning. Between the two, done is called to
// complete res (timing), so the index shows what results.json says.
func (r *runner) writeReport(res *report.Results, nemesis []history.Op, focus *workloads.Focus, done func()) {
	if r.stored != nil {
		if _, err := os.Stat(filepath.Join(r.dir, report.MessagesFile)); err == nil {
			res.Reports = append(res.Reports, report.MessagesFile) // the live run's, kept
		}
	}
	if journal := r.observedRun().Journal; journal != nil {
		r.guard("the message diagram", func() {
			start, initOnly := r.start, r.start.IsZero()
			if initOnly { // the run failed before its main phase: show init
				start = r.started
			}
			if err := report.WriteMessageDiagram(r.dir, journal, start, initOnly, nemesis, r.o.Nodes, focus); err != nil {
				panic(err)
			}
			res.Reports = append(res.Reports, report.MessagesFile)
		})
	}
	done()
	r.guard("the index page", func() {
		res.Reports = append(res.Reports, report.IndexFile)
		if err := report.WriteIndex(r.dir, res, r.o.Nodes); err != nil {
			res.Reports = res.Reports[:len(res.Reports)-1]
			panic(err)
		}
	})
}
