package gputest

import (
	"testing"

	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// CheckRolling runs the walking kernels (tiled.cl's correlate_rolling,
// rows.cl) on the cases in chunks of 1, 2 and 3 planes or rows — each
// chunk's first ones feed outputs of the chunk before, which it must drop
// — through run with each of kernels.RollingChecks' decompositions: every
// volume, a quarter of the images (to bound the programs built). Each
// result must meet the reference and equal the CPU engine's bits.
func CheckRolling(t *testing.T, cases []enginetest.Case, run func(c enginetest.Case, tuning kernels.Tuning) (nd.Array, error)) {
	t.Helper()
	runs, images := 0, 0
	for _, c := range cases {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		checks, image := kernels.RollingChecks(p)
		if image && len(checks) > 0 {
			if images++; images%4 != 1 {
				continue
			}
		}
		for _, tuning := range checks {
			runs++
			got, err := run(c, tuning)
			if err != nil {
				t.Fatalf("%s, %+v: %v", c.Name, tuning, err)
			}
			if msg := c.Check(got, c.Want()); msg != "" {
				t.Fatalf("%s, %+v: %s", c.Name, tuning, msg)
			}
			if msg := SameBitsAsCPU(c, "direct", got); msg != "" {
				t.Fatalf("%s, %+v: %s", c.Name, tuning, msg)
			}
		}
	}
	if runs == 0 {
		t.Fatal("no case ran a walking kernel")
	}
	t.Logf("%d runs of the walking kernels", runs)
}
