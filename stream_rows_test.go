package ndconv

import (
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestWholeRows: a streaming budget holds 8 output planes per halo plane
// (a volume's chunks read little of their input twice), within 16 times
// the budget asked for; small budgets keep two rows.
func TestWholeRows(t *testing.T) {
	plane := int64(2048 * 2048)
	vol := &nd.Problem{In: nd.Uint8, Out: nd.Uint8, InShape: []int{2048, 2048, 2048}, OutShape: []int{2048, 2048, 2048},
		KShape: []int{7, 7, 7}, Kernels: make([]nd.Weights, 1)}
	for _, tc := range []struct{ budget, want int64 }{
		{64 << 20, (48+6)*plane + 48*plane}, // raised for the halo
		{8 << 20, 16 * (8 << 20)},           // raised at most 16-fold
		{1000, 16 * 1000},                   // not even two rows: 16-fold
	} {
		if got := wholeRows(vol, tc.budget); got != tc.want {
			t.Errorf("2048³ 7³, budget %d: %d, want %d", tc.budget, got, tc.want)
		}
	}
	img := &nd.Problem{In: nd.Float32, Out: nd.Float32, InShape: []int{100, 10}, OutShape: []int{100, 10},
		KShape: []int{5, 5}, Kernels: make([]nd.Weights, 1)}
	if got := wholeRows(img, 200); got != (2+4)*40+2*40 { // two rows with their halo
		t.Errorf("100×10 5×5, budget 200: %d", got)
	}
	if got := wholeRows(img, 2<<20); got != 2<<20 { // ample already
		t.Errorf("100×10 5×5, budget 2 MiB: %d", got)
	}
}
