package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/internal/ref"
	"github.com/ndconv/ndconv/nd"
)

func TestRooflineArithmetic(t *testing.T) {
	r := Roofline{CopyGBps: 100, FMAGFlops: 1000}
	// 1 GB at 100 GB/s is 10 ms; 1e9 madds at 1000 GFLOP/s is 2 ms.
	if got := r.Floor(1e9, 1e9); math.Abs(got-0.010) > 1e-12 {
		t.Errorf("memory-bound floor %v s, want 0.010", got)
	}
	// 1e10 madds: 20 ms of arithmetic beats 10 ms of memory.
	if got := r.Floor(1e9, 1e10); math.Abs(got-0.020) > 1e-12 {
		t.Errorf("compute-bound floor %v s, want 0.020", got)
	}
	if got := r.Percent(1e9, 1e9, 40); math.Abs(got-25) > 1e-9 {
		t.Errorf("10 ms floor in 40 ms is %v%%, want 25%%", got)
	}
	if got := (Roofline{}).Percent(1, 1, 1); got != 0 {
		t.Errorf("no roofline gives %v%%", got)
	}
}

// TestSets pins the workload sets the issue names.
func TestSets(t *testing.T) {
	seeds, anchors, banks := Seeds(), Anchors(), Banks()
	count := func(ws []Workload, prefix string) int {
		n := 0
		for _, w := range ws {
			if strings.HasPrefix(w.ID, prefix) {
				n++
			}
		}
		return n
	}
	for prefix, want := range map[string]int{"S000-": 6, "S001-": 31, "S002": 1, "S003-": 8} {
		if got := count(seeds, prefix); got != want {
			t.Errorf("%d %s workloads, want %d", got, prefix, want)
		}
	}
	for prefix, want := range map[string]int{"A-2d-k": 6, "A-2d-sep-": 4, "A-2d-u8-": 3, "A-rgba-": 1, "A-3d-k": 2, "A-3d-sep-": 1, "A-1d-": 3} {
		if got := count(anchors, prefix); got != want {
			t.Errorf("%d %s workloads, want %d", got, prefix, want)
		}
	}
	for prefix, want := range map[string]int{"B-2d-k3-": 1, "B-2d-k5-": 1, "B-3d-k3-": 1, "B-2d-k31-": 1} {
		if got := count(banks, prefix); got != want {
			t.Errorf("%d %s workloads, want %d", got, prefix, want)
		}
	}
	ids := map[string]bool{}
	for _, w := range slices.Concat(seeds, anchors, banks) {
		if ids[w.ID] {
			t.Errorf("duplicate id %s", w.ID)
		}
		ids[w.ID] = true
		if err := Check(w); err != nil {
			t.Errorf("%s: %v", w.ID, err)
		}
	}
	if all, _ := Lookup("all"); len(all) != len(seeds)+len(anchors)+len(banks) {
		t.Errorf("all has %d workloads", len(all))
	}
	if _, err := Lookup("nonesuch"); err == nil {
		t.Error("an unknown set was found")
	}
}

// TestCost checks bytes and multiply-adds on workloads small enough to
// count by hand.
func TestCost(t *testing.T) {
	for _, tc := range []struct {
		w            Workload
		bytes, madds int64
	}{
		{Workload{Shape: []int{10, 10}, DType: "float32", Kernel: []int{3, 3}}, 800, 900},
		{Workload{Shape: []int{10, 10}, DType: "uint8", OutDType: "float32", Kernel: []int{3, 3}, Mode: "valid", Bank: 2}, 100 + 64*2*4, 64 * 9 * 2},
		// Separable: the row pass over 10×10, then the column pass.
		{Workload{Shape: []int{10, 10}, DType: "float32", Kernel: []int{3, 5}, Separable: true}, 800, 100*5 + 100*3},
		// Valid separable: the row pass makes 10×6, the column pass 8×6.
		{Workload{Shape: []int{10, 10}, DType: "float32", Kernel: []int{3, 5}, Separable: true, Mode: "valid"}, 400 + 48*4, 60*5 + 48*3},
		{Workload{Shape: []int{4, 4, 3}, DType: "uint8", Kernel: []int{3, 3}, Channels: 3}, 96, 48 * 9},
	} {
		w := Complete(tc.w)
		if w.Bytes != tc.bytes || w.Madds != tc.madds {
			t.Errorf("%v: %d bytes, %d madds, want %d and %d", tc.w, w.Bytes, w.Madds, tc.bytes, tc.madds)
		}
	}
}

func TestScale(t *testing.T) {
	w := Scale(Anchors()[0], 0.25) // 8192² → 2048²
	if !slices.Equal(w.Shape, []int{2048, 2048}) || w.Bytes != 2*2048*2048*4 {
		t.Errorf("scaled to %v, %d bytes", w.Shape, w.Bytes)
	}
	rgba, _ := Lookup("anchors")
	for _, a := range rgba {
		if a.ID == "A-rgba-k5" {
			if s := Scale(a, 0.5).Shape; !slices.Equal(s, []int{2048, 2048, 4}) {
				t.Errorf("RGBA scaled to %v: the channels must stay", s)
			}
		}
	}
	tiny := Scale(Complete(Workload{Shape: []int{40, 40}, DType: "float32", Kernel: []int{31, 31}, Mode: "valid"}), 0.1)
	if tiny.Shape[0] < 31 {
		t.Errorf("scaled below the kernel: %v", tiny.Shape)
	}
}

// TestData pins the formulas the peer scripts share: a few values by hand,
// kernels normalised to sum 1.
func TestData(t *testing.T) {
	u8, err := Input(Complete(Workload{Shape: []int{3, 100}, DType: "uint8", Kernel: []int{1}}))
	if err != nil {
		t.Fatal(err)
	}
	if d := u8.Data.([]uint8); d[0] != 0 || d[1] != 7919%251 || d[299] != uint8(299*7919%251) {
		t.Errorf("uint8 input %v …", d[:3])
	}
	f32, _ := Input(Complete(Workload{Shape: []int{5}, DType: "float32", Kernel: []int{1}}))
	if d := f32.Data.([]float32); d[2] != float32(float64(2*7919%1009)/1009) {
		t.Errorf("float32 input %v", d)
	}
	for _, sep := range []bool{false, true} {
		ks := Kernels(Complete(Workload{Shape: []int{9, 9}, DType: "float32", Kernel: []int{3, 5}, Separable: sep, Bank: 3}))
		if len(ks) != 3 {
			t.Fatalf("%d kernels", len(ks))
		}
		for b, k := range ks {
			sum := 0.0
			for _, v := range k.Dense() {
				sum += v
			}
			if math.Abs(sum-1) > 1e-6 {
				t.Errorf("separable %v kernel %d sums to %v", sep, b, sum)
			}
		}
		if slices.Equal(ks[0].Dense(), ks[1].Dense()) {
			t.Errorf("separable %v: bank kernels 0 and 1 are equal", sep)
		}
	}
}

// TestResultJSON pins the field names bench/README.md promises.
func TestResultJSON(t *testing.T) {
	w := Complete(Workload{Set: "custom", ID: "x", Shape: []int{64, 64}, DType: "float32", Kernel: []int{3, 3}})
	cpu, err := ndconv.ParseDevice("cpu")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), w, Options{Device: cpu, Workers: 1, Repeats: 3}, "cpu", Roofline{CopyGBps: 10, FMAGFlops: 10})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	var fields map[string]any
	json.Unmarshal(b, &fields)
	for _, name := range []string{"kind", "system", "device", "id", "shape", "dtype", "kernel", "bank", "method",
		"ms_median", "ms_min", "gbps", "gflops", "pct_roofline", "checksum", "repeats"} {
		if _, ok := fields[name]; !ok {
			t.Errorf("result JSON lacks %q: %s", name, b)
		}
	}
	if r.Repeats != 3 || r.MsMedian == nil || *r.MsMin > *r.MsMedian || r.Method != "direct" {
		t.Errorf("result %s", b)
	}
	// The checksum is the output's sum: compare with the reference.
	spec, _ := Spec(w)
	in, _ := Input(w)
	want := 0.0
	for _, v := range ref.Correlate(spec, in.Float64s()).Values {
		want += float64(float32(v))
	}
	if math.Abs(r.Checksum-want) > 1e-3*math.Abs(want) {
		t.Errorf("checksum %v, the reference's %v", r.Checksum, want)
	}
	// A workload that cannot run is a result with a note, not an error.
	bad := Complete(Workload{ID: "bad", Shape: []int{4}, DType: "float32", Kernel: []int{9}, Mode: "valid"})
	r, err = Run(t.Context(), bad, Options{Device: cpu, Repeats: 1}, "cpu", Roofline{})
	if err != nil || r.MsMedian != nil || r.Note == "" {
		t.Errorf("an impossible workload: %+v, %v", r, err)
	}
	b, _ = json.Marshal(r)
	if !strings.Contains(string(b), `"ms_median":null`) {
		t.Errorf("no null median: %s", b)
	}
}

// TestRunGPU times a workload on an OpenCL device (PoCL in CI) through the
// root's bench plan: on device arrays, then once more from host memory
// with a timeline. The checksum is the CPU's (the direct method gives the
// same bits everywhere); the timeline is one chunk's three stages.
func TestRunGPU(t *testing.T) {
	dev, err := ndconv.ParseDevice("opencl")
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Available(); err != nil {
		t.Skipf("no OpenCL: %v", err)
	}
	dev = dev.Resolve()
	cpu, _ := ndconv.ParseDevice("cpu")
	w := Complete(Workload{Set: "custom", ID: "x", Shape: []int{64, 48}, DType: "float32", Kernel: []int{5, 3}})
	want, err := Run(t.Context(), w, Options{Device: cpu, Method: ndconv.Direct, Workers: 1, Repeats: 1}, "cpu", Roofline{})
	if err != nil || want.MsMedian == nil {
		t.Fatalf("on the CPU: %+v, %v", want, err)
	}
	r, err := Run(t.Context(), w, Options{Device: dev, Method: ndconv.Direct, Repeats: 3, NoTuningCache: true, Timeline: true}, "gpu", Roofline{})
	if err != nil || r.MsMedian == nil {
		t.Fatalf("on %v: %+v, %v", dev, r, err)
	}
	if r.System != "ndconv-opencl" || r.Method != "direct" || r.Impl == "" || r.Repeats != 3 || r.Checksum != want.Checksum {
		t.Errorf("on %v: %+v; the CPU's checksum %v", dev, r, want.Checksum)
	}
	if r.Chunks != 1 || len(r.Spans) != 3 || r.Spans[0].Stage != ndconv.StageCopyIn || r.Spans[2].Stage != ndconv.StageCopyOut {
		t.Errorf("timeline: %d chunks, %+v", r.Chunks, r.Spans)
	}
}

// TestInputCache: the kept input is Input's, for the same workload
// (shared, not rebuilt) and after a switch to another shape or dtype.
func TestInputCache(t *testing.T) {
	a := Workload{DType: "float32", Shape: []int{3, 5}}
	b := Workload{DType: "uint8", Shape: []int{3, 5}}
	for _, w := range []Workload{a, a, b, a} {
		got, err := input(w)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Input(w)
		if !slices.Equal(got.Shape, want.Shape) || !bytes.Equal(got.Bytes(), want.Bytes()) || got.DType() != want.DType() {
			t.Fatalf("%v: %v %v, want Input's %v %v", w.Shape, got.DType(), got.Shape, want.DType(), want.Shape)
		}
	}
	first, _ := input(a)
	again, _ := input(a)
	if &first.Bytes()[0] != &again.Bytes()[0] {
		t.Error("the same workload's input was built again")
	}
}

// TestTimesOnly: the tuner's runs give times and no checksum, reuse one
// output array for one dtype and shape, and a new one for another.
func TestTimesOnly(t *testing.T) {
	cpu, _ := ndconv.ParseDevice("cpu")
	w := workload(Workload{Set: "anchors", ID: "t", Shape: []int{40, 30}, DType: "float32", Kernel: []int{3, 3}})
	r, err := Run(t.Context(), w, Options{Device: cpu, Workers: 1, Repeats: 3, TimesOnly: true}, "cpu", Roofline{})
	if err != nil || r.MsMedian == nil || r.Checksum != 0 {
		t.Fatalf("TimesOnly: %+v, %v; want times and no checksum", r, err)
	}
	first, _ := output(nd.Float32, []int{40, 30})
	again, _ := output(nd.Float32, []int{40, 30})
	other, _ := output(nd.Float32, []int{30, 40})
	if &first.Bytes()[0] != &again.Bytes()[0] || !slices.Equal(other.Shape, []int{30, 40}) {
		t.Error("the output array was not kept for its shape, or kept for another")
	}
}

// TestSystemOfMethod: a result of a method auto never takes (Winograd on
// the CPU here; gemm on CUDA) is a system of its own, with auto's and the
// exact methods' results under "ndconv".
func TestSystemOfMethod(t *testing.T) {
	cpu, _ := ndconv.ParseDevice("cpu")
	w := Complete(Workload{Set: "custom", ID: "x", Shape: []int{32, 24}, DType: "float32", Kernel: []int{3, 3}, Bank: 4})
	for _, c := range []struct {
		method ndconv.Method
		want   string
	}{{ndconv.Auto, "ndconv"}, {ndconv.Direct, "ndconv"}, {ndconv.Winograd, "ndconv-winograd"}} {
		r, err := Run(t.Context(), w, Options{Device: cpu, Method: c.method, Workers: 1, Repeats: 1}, "cpu", Roofline{})
		if err != nil || r.MsMedian == nil || r.System != c.want {
			t.Errorf("%v: system %q (%s), %v; want %q", c.method, r.System, r.Note, err, c.want)
		}
	}
}
