package opencl

import (
	"errors"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/kernels"
)

// TestCheckLaunch: what a device cannot run is refused before it is
// launched, with a message naming the device and the limit.
func TestCheckLaunch(t *testing.T) {
	d := &Device{planner: planner{Info{Platform: 1, Device: 0, Name: "tiny-gpu", FP64: false, MaxWorkGroupSize: 128,
		MaxWorkItemSizes: [3]int{128, 128, 64}, LocalMemory: 16 << 10, MaxConstantBuffer: 64 << 10}}}
	base := kernels.Launch{Family: "direct", Name: "correlate_direct", Local: [3]int{32, 4, 1}, Groups: [3]int{1, 1, 1}, Taps: []float64{1}, Outer: []int32{0}}
	var ue *UnsupportedError
	for name, tc := range map[string]struct {
		change func(*kernels.Launch)
		want   string
	}{
		"fp64":           {func(l *kernels.Launch) { l.Wide = true }, "cl_khr_fp64"},
		"group size":     {func(l *kernels.Launch) { l.Local = [3]int{32, 8, 1} }, "at most 128 work-items"},
		"group shape":    {func(l *kernels.Launch) { l.Local = [3]int{1, 1, 100} }, "per dimension"},
		"local memory":   {func(l *kernels.Launch) { l.LocalBytes = 20 << 10 }, "16384 bytes"},
		"constant taps":  {func(l *kernels.Launch) { l.Taps = make([]float64, 20000) }, "__constant"},
		"no work-groups": {func(l *kernels.Launch) { l.Groups = [3]int{0, 1, 1} }, "work size"},
	} {
		l := base
		tc.change(&l)
		err := d.CheckLaunch(&l, &Kernel{maxGroup: 1024})
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an *UnsupportedError saying %q", name, err, tc.want)
		}
	}
	if err := d.fp64(true); !strings.Contains(err.Error(), "opencl:1:0 (tiny-gpu)") {
		t.Errorf("the fp64 error does not name the device: %v", err)
	}
}
