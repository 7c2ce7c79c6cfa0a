package gputest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/ref"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// CheckTunings runs each case with every decomposition checks gives for
// its problem (internal/kerneltest's: RollingChecks, the walking kernels in
// chunks of 1, 2 and 3 planes or rows; SepRingChecks, sepring.cl in narrow
// strips of few rounds; Sep3Checks, sep3.cl in small tiles and short
// segments; SepTileChecks, septile.cl in small tiles; …)
// through run, a backend's engine of the given
// method ("direct" or "separable") with that tuning. Where checks reports
// an image, a quarter of the images run, to bound the programs built.
// Each result must meet the reference and equal the CPU engine's bits
// (both computed once a case). The runs go Workers at a time.
func CheckTunings(t *testing.T, cases []enginetest.Case, checks func(*nd.Problem) ([]kernels.Tuning, bool), method string,
	run func(c enginetest.Case, tuning kernels.Tuning) (nd.Array, error)) {
	t.Helper()
	type job struct {
		c      int
		tuning kernels.Tuning
	}
	var jobs []job
	images := 0
	for i, c := range cases {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		tunings, image := checks(p)
		if image && len(tunings) > 0 {
			if images++; images%4 != 1 {
				continue
			}
		}
		for _, tuning := range tunings {
			jobs = append(jobs, job{i, tuning})
		}
	}
	if len(jobs) == 0 {
		t.Fatal("no case ran the decompositions checked")
	}
	type expected struct {
		ref ref.Result
		cpu nd.Array
		err error
	}
	wants := make([]func() expected, len(cases))
	for i, c := range cases {
		wants[i] = sync.OnceValue(func() expected {
			cpu, err := CPUResult(c, method)
			return expected{c.Want(), cpu, err}
		})
	}
	failures := Each(len(jobs), Workers(), func(i int) string {
		c, tuning := cases[jobs[i].c], jobs[i].tuning
		got, err := run(c, tuning)
		if err != nil {
			return fmt.Sprintf("%s, %+v: %v", c.Name, tuning, err)
		}
		want := wants[jobs[i].c]()
		msg := c.Check(got, want.ref)
		if msg == "" && want.err != nil {
			msg = want.err.Error()
		}
		if msg == "" {
			if msg = SameBits(got, want.cpu); msg != "" {
				msg += " (" + method + ")"
			}
		}
		if msg != "" {
			return fmt.Sprintf("%s, %+v: %s", c.Name, tuning, msg)
		}
		return ""
	})
	for _, f := range failures {
		t.Error(f)
	}
	if len(failures) > 0 {
		t.FailNow()
	}
	t.Logf("%d runs of the decompositions checked", len(jobs))
}

// FuseSmall is checks with each decomposition fusing the separable
// method's passes in strips on the case table's small problems too
// (kernels.Tuning.FuseSmall), so that they test sepfused.cl and sep3.cl
// rather than septile.cl's tiles (TestEngineSepTile's).
func FuseSmall(checks func(*nd.Problem) ([]kernels.Tuning, bool)) func(*nd.Problem) ([]kernels.Tuning, bool) {
	return func(p *nd.Problem) ([]kernels.Tuning, bool) {
		tunings, image := checks(p)
		for i := range tunings {
			tunings[i].FuseSmall = true
		}
		return tunings, image
	}
}

// CheckPlannedFamily fails t unless NewSeparable, untuned within opt's
// limits, plans at least half of the cases with family's kernel first —
// so that a test of that kernel cannot pass by running another.
func CheckPlannedFamily(t *testing.T, cases []enginetest.Case, opt kernels.SeparableOptions, family string) {
	t.Helper()
	n := 0
	for _, c := range cases {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if s, err := kernels.NewSeparable(p, opt); err == nil && s != nil && s.Steps[0].Launch.Family == family {
			n++
		}
	}
	if 2*n < len(cases) {
		t.Errorf("%d of %d cases planned with %s", n, len(cases), family)
	}
}
