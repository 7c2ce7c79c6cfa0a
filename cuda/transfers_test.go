package cuda

import "testing"

// TestGPUTransfers measures pinned host↔device copies each way and both
// at once (logged; the bench reports them beside S002).
func TestGPUTransfers(t *testing.T) {
	d := testDevice(t)
	tr, err := MeasureTransfers(d, 64<<20, 5)
	if err != nil {
		t.Fatal(err)
	}
	if tr.HtoDGBps <= 0 || tr.DtoHGBps <= 0 || tr.BothGBps <= 0 {
		t.Errorf("implausible %+v", tr)
	}
	t.Logf("pinned 64 MiB: host→device %.1f GB/s, device→host %.1f GB/s, both at once %.1f GB/s", tr.HtoDGBps, tr.DtoHGBps, tr.BothGBps)
}
