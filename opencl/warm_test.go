package opencl

import (
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// TestPending: gpu.Pending counts the program a problem needs that is
// built nowhere (a work decomposition no other test uses, a fresh disk
// cache), and none once the engine's Compile has built it — which also
// stored it on disk — and the first Execute builds nothing more.
func TestPending(t *testing.T) {
	d := testDevice(t)
	asProduct(t, d)
	w := make([]float64, 14)
	for i := range w {
		w[i] = float64(i%4) + 1
	}
	p, err := (&nd.Spec{Shape: []int{24, 40}, In: nd.Uint16, Out: nd.Float32, Border: nd.Wrap,
		Kernels: []nd.Kernel{{Shape: []int{7, 2}, Weights: w}}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	opt := gpu.Options{Tuning: kernels.Tuning{Shape: kernels.TiledShape{TX: 8, TY: 2, RX: 1, RY: 3}}}
	lim := d.Limits()
	if l, err := kernels.NewDirect(p, kernels.DirectOptions{MaxLocalBytes: lim.MaxLocalBytes, MaxGroupsYZ: lim.MaxGroupsYZ, Shape: opt.Tuning.Shape}); err != nil || !strings.Contains(l.Describe(), "8x2 threads") {
		t.Fatalf("the launch does not take the tuning: %v, %v", l.Describe(), err)
	}
	info := d.Info()
	pl, err := Planner(info.Platform, info.Device)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := gpu.Pending(pl, gpu.Direct, p, opt); err != nil || n != 1 {
		t.Fatalf("nothing built: %d pending, %v; want 1", n, err)
	}
	dev, err := OpenEngineDevice(info.Platform, info.Device)
	if err != nil {
		t.Fatal(err)
	}
	e, err := gpu.NewDirect(dev, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	before := d.programs.Stats()
	if err := e.Compile(); err != nil {
		t.Fatal(err)
	}
	compiled := d.programs.Stats()
	if compiled.Builds != before.Builds+1 || compiled.DiskWrites != before.DiskWrites+1 {
		t.Errorf("Compile: %+v after %+v, want one build written to disk", compiled, before)
	}
	if n, err := gpu.Pending(pl, gpu.Direct, p, opt); err != nil || n != 0 {
		t.Errorf("after Compile: %d pending, %v", n, err)
	}
	src, _ := nd.New(nd.Uint16, 24, 40)
	dst, _ := nd.New(nd.Float32, 24, 40)
	if err := e.Execute(t.Context(), dst, src); err != nil {
		t.Fatal(err)
	}
	if after := d.programs.Stats(); after.Builds != compiled.Builds {
		t.Errorf("the first Execute after Compile built %d programs", after.Builds-compiled.Builds)
	}
}
