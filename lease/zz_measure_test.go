package lease_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"
)

var measureW = flag.String("measure", "", "comma list of weakenings to measure")
var measureSeeds = flag.String("mseeds", "1,1000001,2000001", "base seeds")

func TestZZMeasure(t *testing.T) {
	if *measureW == "" {
		t.Skip()
	}
	for _, wk := range strings.Split(*measureW, ",") {
		for _, s := range strings.Split(*measureSeeds, ",") {
			var base uint64
			fmt.Sscan(s, &base)
			draw := func(seed uint64) scenario { return drawScenario(seed, wk) }
			if wk == "self" {
				draw = func(seed uint64) scenario { return controls[0].draw(seed) }
			}
			res := runMany(base, *simSchedules, draw, 0)
			fails, first := 0, -1
			prof := map[string]int{}
			for i, o := range res {
				if len(o.violations) > 0 {
					fails++
					prof[o.sc.profile]++
					if first < 0 {
						first = i + 1
					}
				}
			}
			fmt.Printf("measure %s base=%d fails=%d/%d first=%d prof=%v\n", wk, base, fails, len(res), first, prof)
		}
	}
}

func TestZZShow(t *testing.T) {
	if *measureW == "" || *simSeed == 0 {
		t.Skip()
	}
	res := runMany(*simSeed, *simSchedules, func(seed uint64) scenario { return drawScenario(seed, *measureW) }, 0)
	for _, o := range res {
		if len(o.violations) > 0 {
			reportFailure(t, o)
		}
	}
}

var forceShape string
var forceFlag = flag.String("force", "", "force shape")
var forceProfile = flag.String("fprof", "", "force profile: mixed|stale")

func TestZZForce(t *testing.T) {
	if *measureW == "" || *forceFlag == "" {
		t.Skip()
	}
	setupProto()
	defer func() { forceShape = ""; protoDur = nil }()
	for _, s := range strings.Split(*measureSeeds, ",") {
		var base uint64
		fmt.Sscan(s, &base)
		res := runMany(base, *simSchedules, protoDraw, 0)
		fails, first := 0, -1
		for i, o := range res {
			if len(o.violations) > 0 {
				fails++
				if first < 0 {
					first = i + 1
				}
			}
		}
		fmt.Printf("force %s %s base=%d fails=%d/%d first=%d\n", *measureW, *forceFlag, base, fails, len(res), first)
	}
}

func protoDraw(seed uint64) scenario {
	for {
		sc := drawScenario(seed, *measureW)
		if *forceProfile == "" || sc.profile == *forceProfile {
			if *protoMode != "" {
				sc.hold = true
			}
			if sc.partition == 0 {
				sc.partition = 1000e6
			}
			return sc
		}
		seed += 1 << 40
	}
}

func setupProto() {
	forceShape = *forceFlag
	switch *protoMode {
	case "stall":
		protoDur = func(w *world, on bool) time.Duration {
			if on {
				return time.Duration(200+w.rng.IntN(1800)) * time.Millisecond
			}
			return time.Duration(w.rng.ExpFloat64()*500e6) + time.Millisecond
		}
	}
}

var protoDur func(w *world, on bool) time.Duration
var protoMode = flag.String("proto", "", "prototype duration mode")

func init() {
	_ = time.Second
}
