package ndconv

import (
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestWholeRows: a streaming budget for a device the chunks are copied to
// holds 8 output planes per halo plane (a volume's chunks copy little of
// their input twice), within 16 times the budget asked for; small budgets,
// and the CPU's, keep two rows.
func TestWholeRows(t *testing.T) {
	plane := int64(2048 * 2048)
	vol := &nd.Problem{In: nd.Uint8, Out: nd.Uint8, InShape: []int{2048, 2048, 2048}, OutShape: []int{2048, 2048, 2048},
		KShape: []int{7, 7, 7}, Kernels: make([]nd.Weights, 1)}
	for _, tc := range []struct{ budget, want int64 }{
		{64 << 20, (48+6)*plane + 48*plane}, // raised for the halo
		{8 << 20, 16 * (8 << 20)},           // raised at most 16-fold
		{1000, 16 * 1000},                   // not even two rows: 16-fold
	} {
		if got := wholeRows(vol, tc.budget, true); got != tc.want {
			t.Errorf("2048³ 7³, budget %d: %d, want %d", tc.budget, got, tc.want)
		}
	}
	img := &nd.Problem{In: nd.Float32, Out: nd.Float32, InShape: []int{100, 10}, OutShape: []int{100, 10},
		KShape: []int{5, 5}, Kernels: make([]nd.Weights, 1)}
	if got := wholeRows(img, 200, true); got != (2+4)*40+2*40 { // two rows with their halo
		t.Errorf("100×10 5×5, budget 200: %d", got)
	}
	if got := wholeRows(img, 2<<20, true); got != 2<<20 { // ample already
		t.Errorf("100×10 5×5, budget 2 MiB: %d", got)
	}
	// The CPU reads the chunks in place: two planes with their halo.
	for _, tc := range []struct{ budget, want int64 }{
		{64 << 20, 64 << 20},             // (2+6)+2 planes fit
		{8 << 20, (2+6)*plane + 2*plane}, // raised for two planes
	} {
		if got := wholeRows(vol, tc.budget, false); got != tc.want {
			t.Errorf("on the CPU, 2048³ 7³, budget %d: %d, want %d", tc.budget, got, tc.want)
		}
	}
}
