package cuda

import (
	"testing"

	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/nd"
)

// directPending is gpu.Pending for the direct method on cuda:0.
func directPending(p *nd.Problem) (int, error) {
	pl, err := Planner(0)
	if err != nil {
		return 0, err
	}
	return gpu.Pending(pl, gpu.Direct, p, gpu.Options{})
}

// TestGPUPending: gpu.Pending counts the module a fresh cache lacks, and
// none once an engine's Compile has compiled it — in this process (the
// device open) and in a later one (the disk cache alone); the first
// Execute after Compile compiles nothing; StaticInfo agrees with the open
// device without a context.
func TestGPUPending(t *testing.T) {
	d := testDevice(t)
	testCacheDir(t)
	dropModules(t, d)
	w := make([]float64, 15)
	for i := range w {
		w[i] = float64(i + 1)
	}
	p, err := (&nd.Spec{Shape: []int{40, 56}, In: nd.Float32, Kernels: []nd.Kernel{{Shape: []int{3, 5}, Weights: w}}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := directPending(p); err != nil || n != 1 {
		t.Fatalf("a fresh cache: %d pending, %v; want 1", n, err)
	}
	dev, err := OpenEngineDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	e, err := gpu.NewDirect(dev, p, gpu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := d.modules.Stats()
	if err := e.Compile(); err != nil {
		t.Fatal(err)
	}
	compiled := d.modules.Stats()
	if compiled.Builds != before.Builds+1 {
		t.Errorf("Compile compiled %d modules, want 1", compiled.Builds-before.Builds)
	}
	src, _ := nd.New(nd.Float32, 40, 56)
	dst, _ := nd.New(nd.Float32, 40, 56)
	if err := e.Execute(t.Context(), dst, src); err != nil {
		t.Fatal(err)
	}
	if after := d.modules.Stats(); after.Builds != compiled.Builds {
		t.Errorf("the first Execute after Compile compiled %d modules", after.Builds-compiled.Builds)
	}
	e.Close()
	if n, err := directPending(p); err != nil || n != 0 {
		t.Errorf("after compiling: %d pending, %v", n, err)
	}
	dropModules(t, d) // as a new process sees it: only the disk remembers
	if n, err := directPending(p); err != nil || n != 0 {
		t.Errorf("from the disk cache: %d pending, %v", n, err)
	}
	info, err := StaticInfo(0)
	if err != nil || info.Name != d.info.Name || info.ComputeCapability != d.info.ComputeCapability {
		t.Errorf("StaticInfo = %+v, %v", info, err)
	}
	if !IsOpen(0) {
		t.Error("the shared device is not open")
	}
}
