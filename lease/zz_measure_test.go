package lease_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"
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
