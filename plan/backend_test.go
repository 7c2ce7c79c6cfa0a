package plan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/opencl"
)

// twinBackend is a backend added the way a new one is: its own type and one
// Register call. It runs the CPU engines under another name, so that its
// results can be held against the CPU's.
type twinBackend struct{ cpuBackend }

func (twinBackend) Name() string  { return "twin" }
func (twinBackend) Forms() string { return "twin, twin:N" }

func (b twinBackend) Device(nums []int) (Device, bool) {
	d := Device{Kind: b.Name()}
	if len(nums) == 1 {
		d.Index = nums[0]
	}
	return d, len(nums) <= 1
}

func (b twinBackend) Format(d Device) string { return fmt.Sprintf("%s:%d", b.Name(), d.Index) }

func (b twinBackend) Implementations() []Implementation {
	impls := cpuBackend{}.Implementations()
	for i := range impls {
		impls[i].Device = b.Name()
	}
	return impls
}

// registerTwin registers twinBackend for the test.
func registerTwin(t *testing.T) {
	Register(twinBackend{})
	t.Cleanup(func() {
		backends = slices.DeleteFunc(backends, func(b Backend) bool { return b.Name() == "twin" })
	})
}

// TestRegisteredBackend: a backend registered once is parsed, planned,
// given memory and run through its interface alone — no switch in the
// planner names it — and, running the CPU's engines, gives the CPU's bits.
func TestRegisteredBackend(t *testing.T) {
	dev := Device{Kind: "twin", Index: 2}
	var ue *UnavailableError
	if _, err := New(sampleProblem(t), Options{Device: dev}); !errors.As(err, &ue) {
		t.Fatalf("before registration: %v, want an UnavailableError", err)
	}
	registerTwin(t)
	if got, err := ParseDevice("TWIN:2"); err != nil || got != dev || got.String() != "twin:2" {
		t.Errorf("ParseDevice(TWIN:2) = %+v (%v), %v", got, got, err)
	}
	var bad *nd.UnsupportedError
	if _, err := ParseDevice("twin:1:2"); !errors.As(err, &bad) || !strings.HasSuffix(bad.Supported, "opencl, opencl:P:D, twin, twin:N") {
		t.Errorf("ParseDevice(twin:1:2): %v", err)
	}
	if b, ok := Lookup("twin"); !ok || b.Name() != "twin" || dev.GPU() {
		t.Errorf("Lookup(twin) = %v, %v; GPU %v", b, ok, dev.GPU())
	}

	p := sampleProblem(t)
	src := randomInput(p)
	want := run(t, p, Device{Kind: "cpu"}, src)
	for _, m := range []Method{Direct, Separable, FFT} {
		e, err := New(p, Options{Device: dev, Method: m})
		if err != nil {
			t.Fatalf("%v on twin: %v", m, err)
		}
		if e.Device != dev || e.Method != m {
			t.Errorf("planned %v %v, want %v %v", e.Device, e.Method, dev, m)
		}
		wantM := run(t, p, Device{Kind: "cpu"}, src, m)
		got, _ := nd.New(p.Out, p.FullShape()...)
		if err := e.Execute(context.Background(), got, src); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), wantM.Bytes()) {
			t.Errorf("%v on twin differs from the CPU's bits", m)
		}
	}

	// Its memory: the planner reaches it through the Backend's OpenMemory.
	mem, err := OpenMemory(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	e, err := New(p, Options{Device: dev})
	if err != nil {
		t.Fatal(err)
	}
	in, err := mem.Upload(src)
	if err != nil {
		t.Fatal(err)
	}
	out, err := mem.Alloc(p.Out, p.FullShape()...)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ExecuteDevice(context.Background(), out, in); err != nil {
		t.Fatal(err)
	}
	got, _ := nd.New(p.Out, p.FullShape()...)
	if err := out.Read(got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Error("ExecuteDevice on twin differs from the CPU's bits")
	}
	// A plan on the CPU does not run on twin's arrays.
	ec, _ := New(p, Options{Device: Device{Kind: "cpu"}})
	var ae *nd.ArgumentError
	if err := ec.ExecuteDevice(context.Background(), out, in); !errors.As(err, &ae) {
		t.Errorf("a cpu plan on twin's arrays: %v, want an ArgumentError", err)
	}
}

// TestRegisterTwice: a name is registered once.
func TestRegisterTwice(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a second cpu backend was registered")
		}
	}()
	Register(cpuBackend{})
}

// sampleProblem is 37×41 float32 with a 5×5 kernel of rank 1 (every method
// runs it).
func sampleProblem(t *testing.T) *nd.Problem {
	t.Helper()
	f := []float64{0.5, -1.25, 2, 0.75, -0.125}
	p, err := (&nd.Spec{Shape: []int{37, 41}, In: nd.Float32, Kernels: []nd.Kernel{{Factors: [][]float64{f, f}}}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func randomInput(p *nd.Problem) nd.Array {
	r := rand.New(rand.NewPCG(31, 3))
	x := make([]float32, product(p.InShape))
	for i := range x {
		x[i] = r.Float32()*2 - 1
	}
	a, _ := nd.FromSlice(x, p.InShape...)
	return a
}

// run computes p on dev by method m (auto where none).
func run(t *testing.T, p *nd.Problem, dev Device, src nd.Array, m ...Method) nd.Array {
	t.Helper()
	opt := Options{Device: dev}
	if len(m) > 0 {
		opt.Method = m[0]
	}
	e, err := New(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	dst, _ := nd.New(p.Out, p.FullShape()...)
	if err := e.Execute(context.Background(), dst, src); err != nil {
		t.Fatal(err)
	}
	return dst
}

// oldReason is how the planner read a backend's unavailability before the
// backends were values: the message with the package's prefix stripped.
func oldReason(err error) string {
	msg := err.Error()
	for _, prefix := range []string{"cuda: unavailable: ", "cuda: ", "opencl: unavailable: ", "opencl: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return msg
}

// setBackend names the backend of a made unavailability error where its
// type has the field: internal/gpu's one UnavailableError (which cuda and
// opencl alias on the gpuhost branch) has it, the packages' own types do
// not.
func setBackend(err error, backend string) {
	if f := reflect.ValueOf(err).Elem().FieldByName("Backend"); f.IsValid() {
		f.SetString(backend)
	}
}

// TestUnavailableReason: the reason read from the backends' typed errors is
// the text the planner printed before, for the errors this machine gives
// and for made ones with an error under them.
func TestUnavailableReason(t *testing.T) {
	errs := []struct {
		raw error
		got error
	}{
		{cuda.Available(), cudaBackend{}.Available()},
		{opencl.Available(), openclBackend{}.Available()},
	}
	cu := &cuda.UnavailableError{Reason: "cannot count devices", Err: errors.New("cuda: cuDeviceGetCount: CUDA_ERROR_UNKNOWN")}
	cl := &opencl.UnavailableError{Reason: "cannot list platforms and devices", Err: errors.New("opencl: clGetPlatformIDs: -1001")}
	none := &cuda.UnavailableError{Reason: "no CUDA device"}
	setBackend(cu, "cuda")
	setBackend(cl, "opencl")
	setBackend(none, "cuda")
	errs = append(errs,
		struct{ raw, got error }{cu, withReason(cu, "cuda", cu.Reason, cu.Err)},
		struct{ raw, got error }{cl, withReason(cl, "opencl", cl.Reason, cl.Err)},
		struct{ raw, got error }{none, withReason(none, "cuda", none.Reason, nil)})
	for _, e := range errs {
		if e.raw == nil {
			if e.got != nil {
				t.Errorf("available, but the backend says %v", e.got)
			}
			continue
		}
		if e.got.Error() != e.raw.Error() {
			t.Errorf("message %q, want %q", e.got, e.raw)
		}
		if got, want := UnavailableReason(e.got), oldReason(e.raw); got != want {
			t.Errorf("reason %q, want %q", got, want)
		}
		if !errors.Is(e.got, e.raw) {
			t.Errorf("%v does not unwrap to the backend's error", e.got)
		}
	}
}

// TestListDevices: every registered backend lists its devices by the
// strings ParseDevice reads back; the CPU is always there, and the GPUs
// where their backend is available.
func TestListDevices(t *testing.T) {
	ds := ListDevices()
	if len(ds) == 0 || ds[0].Device != (Device{Kind: "cpu"}) || !ds[0].Usable {
		t.Fatalf("ListDevices() = %+v, want the CPU first", ds)
	}
	kinds := map[string]int{}
	for _, d := range ds {
		kinds[d.Device.Kind]++
		if got, err := ParseDevice(d.Device.String()); err != nil || got != d.Device {
			t.Errorf("%+v: ParseDevice(%q) = %+v, %v", d, d.Device.String(), got, err)
		}
		if d.Name == "" || d.Type == "" {
			t.Errorf("%+v: no name or type", d)
		}
	}
	for _, b := range Backends() {
		if (b.Available() == nil) != (kinds[b.Name()] > 0) {
			t.Errorf("%s: available %v, %d devices listed", b.Name(), b.Available(), kinds[b.Name()])
		}
	}
}

// TestParseDevices: lists keep their order and duplicates; KIND:all is
// every usable device of a backend, or an error naming why none; a bad
// entry is ParseDevice's error.
func TestParseDevices(t *testing.T) {
	ds, err := ParseDevices("cpu, cpu,auto")
	if err != nil || len(ds) != 3 || ds[0].Kind != "cpu" || ds[1].Kind != "cpu" || !ds[2].IsAuto() {
		t.Errorf("ParseDevices(cpu, cpu,auto) = %v, %v", ds, err)
	}
	if ds, err := ParseDevices("cpu:all"); err != nil || len(ds) != 1 || ds[0].Kind != "cpu" {
		t.Errorf("cpu:all = %v, %v", ds, err)
	}
	var ue *UnavailableError
	if _, err := ParseDevices("cuda:all"); (err == nil) != (cudaBackend{}.Available() == nil) {
		t.Errorf("cuda:all: %v, with CUDA available: %v", err, cudaBackend{}.Available())
	} else if err != nil && !errors.As(err, &ue) {
		t.Errorf("cuda:all without CUDA: %T %v, want an *UnavailableError", err, err)
	}
	// cuda:all lists the devices from their static attributes
	// (cuda.Describe, opening none): the usable ones Devices lists.
	if (cudaBackend{}).Available() == nil {
		all, err := ParseDevices("cuda:all")
		infos, err2 := cudaBackend{}.Devices()
		var want []Device
		for _, d := range infos {
			if d.Usable {
				want = append(want, d.Device)
			}
		}
		if err != nil || err2 != nil || !slices.Equal(all, want) {
			t.Errorf("cuda:all = %v, %v; the usable devices listed: %v, %v", all, err, want, err2)
		}
	}
	for _, bad := range []string{"gpu:all", "cpu,", "cuda:x"} {
		if _, err := ParseDevices(bad); err == nil {
			t.Errorf("ParseDevices(%q) accepted", bad)
		}
	}
}
