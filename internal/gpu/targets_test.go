package gpu_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/gpu"
	"github.com/ndconv/ndconv/opencl"
)

// Target is a device the engine's tests run on: cuda:0
// where CUDA is available, and the OpenCL test device (NDCONV_OPENCL_DEVICE,
// "P:D", default 0:0) where OpenCL is. Each is opened once per test binary
// and held open, so that what it has built serves every test.
type Target struct {
	Name    string // "cuda:0", "opencl:0:0"
	Backend string // "cuda", "opencl"
	// Sample is true where the tests run a sample of their cases: on
	// OpenCL, whose builds of a specialisation take about a second on PoCL
	// and NVIDIA's OpenCL alike, unless NDCONV_OPENCL_ALL=1.
	Sample bool
	// PoCL is OpenCL on the CPU, which builds one program at a time.
	PoCL bool
	// Short is go test -short (compute-sanitizer's runs): fewer cases.
	Short bool

	dev    gpu.Device
	reopen func() (gpu.Device, error)
	cl     *opencl.Device // the OpenCL device, for its test builds
}

// Open opens another reference to the device: an engine takes one and
// closes it.
func (tg *Target) Open() (gpu.Device, error) { return tg.reopen() }

// Device is the reference the tests share.
func (tg *Target) Device() gpu.Device { return tg.dev }

// Optimised makes the device build optimised until t ends (PoCL's test
// builds are not, unless NDCONV_OPENCL_ALL=1).
func (tg *Target) Optimised(t *testing.T) {
	if tg.cl == nil {
		return
	}
	without, was := tg.cl.TestBuilds(tg.PoCL, false)
	t.Cleanup(func() { tg.cl.TestBuilds(without, was) })
}

var (
	targetsOnce sync.Once
	targets     []*Target
	targetsWhy  []string
	targetsErr  error
)

// AllCases reports whether the tests run every case on OpenCL
// (NDCONV_OPENCL_ALL=1).
func AllCases() bool { return os.Getenv("NDCONV_OPENCL_ALL") == "1" }

// wanted reports whether NDCONV_GPU_TARGETS ("cuda", "opencl", or both
// with a comma; default both) names the backend: a device run splits the
// suites between processes with it.
func wanted(backend string) bool {
	s := os.Getenv("NDCONV_GPU_TARGETS")
	return s == "" || slices.Contains(strings.Split(s, ","), backend)
}

// openTargets opens every available target once.
func openTargets() {
	if !wanted("cuda") {
		targetsWhy = append(targetsWhy, "cuda: not in NDCONV_GPU_TARGETS")
	} else if err := cuda.Available(); err != nil {
		targetsWhy = append(targetsWhy, "cuda: "+err.Error())
	} else if dev, err := cuda.OpenEngineDevice(0); err != nil {
		targetsErr = err
	} else {
		targets = append(targets, &Target{Name: "cuda:0", Backend: "cuda", dev: dev, Short: testing.Short(),
			reopen: func() (gpu.Device, error) { return cuda.OpenEngineDevice(0) }})
	}
	if !wanted("opencl") {
		targetsWhy = append(targetsWhy, "opencl: not in NDCONV_GPU_TARGETS")
		return
	}
	if err := opencl.Available(); err != nil {
		targetsWhy = append(targetsWhy, "opencl: "+err.Error())
		return
	}
	platform, device := 0, 0
	if s := os.Getenv("NDCONV_OPENCL_DEVICE"); s != "" {
		if _, err := fmt.Sscanf(s, "%d:%d", &platform, &device); err != nil {
			targetsErr = fmt.Errorf("NDCONV_OPENCL_DEVICE=%q: want P:D", s)
			return
		}
	}
	cl, err := opencl.Open(platform, device)
	if err != nil {
		targetsErr = err
		return
	}
	pocl := strings.Contains(cl.Info().PlatformVersion, "PoCL")
	if pocl {
		cl.TestBuilds(true, !AllCases())
	}
	dev, err := opencl.OpenEngineDevice(platform, device)
	if err != nil {
		targetsErr = err
		return
	}
	targets = append(targets, &Target{Name: fmt.Sprintf("opencl:%d:%d", platform, device), Backend: "opencl", dev: dev, cl: cl,
		Sample: !AllCases(), PoCL: pocl, Short: testing.Short(),
		reopen: func() (gpu.Device, error) { return opencl.OpenEngineDevice(platform, device) }})
}

// Targets returns every available target, skipping t, saying why, where
// there is none (unless NDCONV_REQUIRE_OPENCL or NDCONV_REQUIRE_CUDA is 1,
// where a missing backend fails it).
func Targets(t testing.TB) []*Target {
	t.Helper()
	targetsOnce.Do(openTargets)
	if targetsErr != nil {
		t.Fatal(targetsErr)
	}
	for _, b := range []string{"cuda", "opencl"} {
		if wanted(b) && os.Getenv("NDCONV_REQUIRE_"+strings.ToUpper(b)) == "1" && !hasBackend(b) {
			t.Fatalf("no usable %s device, and NDCONV_REQUIRE_%s=1: %s", b, strings.ToUpper(b), strings.Join(targetsWhy, "; "))
		}
	}
	if len(targets) == 0 {
		t.Skipf("no usable GPU device: %s", strings.Join(targetsWhy, "; "))
	}
	return targets
}

func hasBackend(b string) bool {
	for _, tg := range targets {
		if tg.Backend == b {
			return true
		}
	}
	return false
}

// ForEach runs fn on every target as a subtest named after it.
func ForEach(t *testing.T, fn func(t *testing.T, tg *Target)) {
	t.Helper()
	for _, tg := range Targets(t) {
		t.Run(tg.Name, func(t *testing.T) { fn(t, tg) })
	}
}

// EveryNth is cases 0, n, 2n, … where the target samples (and every
// seventh under -short), else all of them.
func (tg *Target) EveryNth(cases []enginetest.Case, n int) []enginetest.Case {
	if tg.Short {
		n = max(n, 7)
	} else if !tg.Sample {
		return cases
	}
	var some []enginetest.Case
	for i, c := range cases {
		if i%n == 0 {
			some = append(some, c)
		}
	}
	return some
}
