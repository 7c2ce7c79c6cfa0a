package main

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// The entry points are called as C calls them, through their Go twins
// (the exported wrappers only convert types): raw pointers, NULLs and
// counts of any sign.

// errBuf is a caller's error buffer.
type errBuf [256]byte

func (e *errBuf) ptr() unsafe.Pointer { return unsafe.Pointer(&e[0]) }
func (e *errBuf) len() int32          { return int32(len(e)) }
func (e *errBuf) String() string {
	s, _, _ := bytes.Cut(e[:], []byte{0})
	return string(s)
}

func cstr(s string) unsafe.Pointer { return unsafe.Pointer(&append([]byte(s), 0)[0]) }

func f64ptr(w []float64) unsafe.Pointer {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Pointer(&w[0])
}

const spec1D = `{"op":"correlate","shape":[8],"dtype":"float64","border":"reflect","kernel_shape":[3],"nkernels":1}`

// mustPlan makes a plan of spec and weights, failing the test on an error.
func mustPlan(t *testing.T, spec string, w []float64) int64 {
	t.Helper()
	var id int64
	var e errBuf
	if rc := planNew(cstr(spec), f64ptr(w), int64(len(w)), &id, e.ptr(), e.len()); rc != 0 {
		t.Fatalf("planNew(%s) = %d: %s", spec, rc, e.String())
	}
	t.Cleanup(func() { planFree(id, nil, 0) })
	return id
}

// wantErr checks a call's code and that its message holds want.
func wantErr(t *testing.T, what string, rc int32, e *errBuf, code int32, want string) {
	t.Helper()
	if rc != code || !strings.Contains(e.String(), want) {
		t.Errorf("%s = %d %q, want %d and a message with %q", what, rc, e.String(), code, want)
	}
	if strings.Contains(e.String(), "internal error") {
		t.Errorf("%s panicked: %s", what, e.String())
	}
}

func TestPlanNewArguments(t *testing.T) {
	w := []float64{1, 2, 3}
	var id int64
	cases := []struct {
		name     string
		spec     unsafe.Pointer
		weights  unsafe.Pointer
		nweights int64
		out      *int64
		code     int32
		want     string
	}{
		// Issue 34: nweights=-5 was "unsafe.Slice: len out of range".
		{"negative count", cstr(spec1D), f64ptr(w), -5, &id, 1, "invalid weights: a count of -5 is negative"},
		{"huge count", cstr(spec1D), f64ptr(w), math.MaxInt64, &id, 1, "invalid weights: 9223372036854775807 is more than"},
		{"NULL weights", cstr(spec1D), nil, 3, &id, 1, "invalid weights: NULL with a count of 3"},
		{"NULL request", nil, f64ptr(w), 3, &id, 1, "invalid request: NULL"},
		{"NULL handle", cstr(spec1D), f64ptr(w), 3, nil, 1, "invalid handle: the pointer to store it at is NULL"},
		{"too few weights", cstr(spec1D), f64ptr(w), 2, &id, 1, "1 kernels of shape [3] need 3 weights, got 2"},
		{"no weights", cstr(spec1D), nil, 0, &id, 1, "need 3 weights, got 0"},
		{"malformed", cstr(`{"op":`), f64ptr(w), 3, &id, 1, "invalid request: malformed JSON"},
		{"bare NaN", cstr(`{"shape":[8],"dtype":"float64","cval":NaN}`), f64ptr(w), 3, &id, 1, "invalid request: malformed JSON"},
		{"unknown field", cstr(`{"shape":[8],"dtype":"float64","border":"reflect","kernel_shape":[3],"nkernels":1,"cvall":1}`), f64ptr(w), 3, &id, 1, `unknown field "cvall"`},
		{"trailing data", cstr(spec1D + `{}`), f64ptr(w), 3, &id, 1, "data after the request's object"},
		{"0-d input", cstr(`{"shape":[],"dtype":"float64","border":"reflect","kernel_shape":[],"nkernels":1}`), f64ptr(w), 1, &id, 1, "invalid shape: a 0-D array has no axis to filter"},
		{"empty kernel shape", cstr(`{"shape":[8],"dtype":"float64","border":"reflect","kernel_shape":[0],"nkernels":1000000000000}`), nil, 0, &id, 1, "shape [0] has no taps"},
		{"overflowing count", cstr(`{"shape":[8],"dtype":"float64","border":"reflect","kernel_shape":[3],"nkernels":6148914691236517206}`), f64ptr(w), 2, &id, 1, "need more than 2^63 weights"},
		{"bad cval string", cstr(`{"shape":[8],"dtype":"float64","border":"reflect","kernel_shape":[3],"nkernels":1,"cval":"lots"}`), f64ptr(w), 3, &id, 1, `"lots" is not a number`},
		{"negative workers", cstr(`{"shape":[8],"dtype":"float64","border":"reflect","kernel_shape":[3],"nkernels":1,"workers":-1}`), f64ptr(w), 3, &id, 1, "invalid workers: -1 is negative"},
		{"filter and weights", cstr(`{"shape":[8],"dtype":"float64","border":"reflect","filter":"laplace"}`), f64ptr(w), 3, &id, 1, "a named filter takes no weights"},
		{"factors short", cstr(`{"shape":[8,8],"dtype":"float64","border":"reflect","kernel_shape":[3,5],"factors":true}`), f64ptr(w), 3, &id, 1, "factor of 5 taps with 0 weights left"},
		{"negative factor", cstr(`{"shape":[8,8],"dtype":"float64","border":"reflect","kernel_shape":[-1],"factors":true}`), f64ptr(w), 3, &id, 1, "factor of -1 taps"},
	}
	for _, c := range cases {
		var e errBuf
		id = -1
		rc := planNew(c.spec, c.weights, c.nweights, c.out, e.ptr(), e.len())
		wantErr(t, c.name, rc, &e, c.code, c.want)
		if id != -1 {
			t.Errorf("%s: a handle (%d) was stored", c.name, id)
		}
	}
}

func TestPlanExecuteArguments(t *testing.T) {
	id := mustPlan(t, spec1D, []float64{1, 2, 3})
	src, dst := make([]float64, 8), make([]float64, 8)
	s, d := unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0])
	cases := []struct {
		name     string
		id       int64
		src      unsafe.Pointer
		srcBytes int64
		dst      unsafe.Pointer
		dstBytes int64
		code     int32
		want     string
	}{
		// Issue 34: was "unsafe.Slice: ptr is nil and len is not zero".
		{"NULL buffers", id, nil, 64, nil, 64, 1, "invalid input: NULL with 64 bytes"},
		{"NULL output", id, s, 64, nil, 64, 1, "invalid output: NULL with 64 bytes"},
		{"negative input", id, s, -64, d, 64, 1, "invalid input: -64 bytes is negative"},
		{"negative output", id, s, 64, d, -8, 1, "invalid output: -8 bytes is negative"},
		{"short input", id, s, 56, d, 64, 1, "input: invalid array: float64 [8] needs 64 bytes, the buffer has 56"},
		{"long output", id, s, 64, d, 72, 1, "output: invalid array: float64 [8] needs 64 bytes, the buffer has 72"},
		{"empty input", id, nil, 0, d, 64, 1, "needs 64 bytes, the buffer has 0"},
		{"unknown handle", 1 << 40, s, 64, d, 64, 2, "no plan 1099511627776"},
		{"handle 0", 0, s, 64, d, 64, 2, "no plan 0"},
		{"negative handle", -3, s, 64, d, 64, 2, "no plan -3"},
	}
	for _, c := range cases {
		var e errBuf
		rc := planExecute(c.id, c.src, c.srcBytes, c.dst, c.dstBytes, e.ptr(), e.len())
		wantErr(t, c.name, rc, &e, c.code, c.want)
	}
	var e errBuf
	if rc := planExecute(id, s, 64, d, 64, e.ptr(), e.len()); rc != 0 {
		t.Fatalf("a valid call failed: %d %s", rc, e.String())
	}
}

func TestPlanInfoArguments(t *testing.T) {
	id := mustPlan(t, spec1D, []float64{1, 2, 3})
	var buf [256]byte
	for _, c := range []struct {
		name string
		id   int64
		buf  unsafe.Pointer
		n    int32
		code int32
		want string
	}{
		{"NULL buffer", id, nil, 256, 1, "invalid info buffer: NULL or 256 bytes"},
		{"negative length", id, unsafe.Pointer(&buf[0]), -1, 1, "invalid info buffer"},
		{"short buffer", id, unsafe.Pointer(&buf[0]), 8, 1, "8 bytes, the plan's info needs"},
		{"unknown handle", 12345678, unsafe.Pointer(&buf[0]), 256, 2, "no plan 12345678"},
	} {
		var e errBuf
		rc := planInfo(c.id, c.buf, c.n, e.ptr(), e.len())
		wantErr(t, c.name, rc, &e, c.code, c.want)
	}
	var e errBuf
	if rc := planInfo(id, unsafe.Pointer(&buf[0]), 256, e.ptr(), e.len()); rc != 0 {
		t.Fatalf("info: %d %s", rc, e.String())
	}
	if got := string(bytes.TrimRight(buf[:], "\x00")); !strings.Contains(got, `"shape":[8],"dtype":"float64"`) {
		t.Errorf("info = %s", got)
	}
}

// TestPlanMethod: the request's method is read as ndconv.ParseMethod reads
// it (case and spaces aside), and an unknown one is an invalid request
// naming the method.
func TestPlanMethod(t *testing.T) {
	w := []float64{1, 2, 3}
	for _, m := range []string{"direct", "separable", " FFT "} {
		spec := `{"shape":[8],"dtype":"float32","border":"reflect","kernel_shape":[3],"nkernels":1,"method":"` + m + `"}`
		id := mustPlan(t, spec, w)
		var buf [256]byte
		var e errBuf
		if rc := planInfo(id, unsafe.Pointer(&buf[0]), 256, e.ptr(), e.len()); rc != 0 {
			t.Fatalf("info: %d %s", rc, e.String())
		}
		want := `"method":"` + strings.ToLower(strings.TrimSpace(m)) + `"`
		if got := string(bytes.TrimRight(buf[:], "\x00")); !strings.Contains(got, want) {
			t.Errorf("method %q: info = %s, want %s", m, got, want)
		}
	}
	var id int64
	var e errBuf
	spec := strings.TrimSuffix(spec1D, "}") + `,"method":"fastest"}`
	rc := planNew(cstr(spec), f64ptr(w), 3, &id, e.ptr(), e.len())
	wantErr(t, "method fastest", rc, &e, 1, `method "fastest"`)
}

func TestPlanFreeTwice(t *testing.T) {
	var id int64
	var e errBuf
	w := []float64{1, 2, 3}
	if rc := planNew(cstr(spec1D), f64ptr(w), 3, &id, e.ptr(), e.len()); rc != 0 {
		t.Fatal(e.String())
	}
	if rc := planFree(id, e.ptr(), e.len()); rc != 0 {
		t.Fatalf("free: %d %s", rc, e.String())
	}
	rc := planFree(id, e.ptr(), e.len())
	wantErr(t, "second free", rc, &e, 2, "freed already?")
	src := make([]float64, 8)
	rc = planExecute(id, unsafe.Pointer(&src[0]), 64, unsafe.Pointer(&src[0]), 64, e.ptr(), e.len())
	wantErr(t, "execute after free", rc, &e, 2, "(freed?)")
	// NULL error buffers, or ones of no length, are left alone.
	if rc := planFree(id, nil, 100); rc != 2 {
		t.Errorf("free with a NULL error buffer = %d", rc)
	}
	if rc := planFree(id, e.ptr(), -7); rc != 2 {
		t.Errorf("free with a negative error length = %d", rc)
	}
}

func TestErrorBufferCut(t *testing.T) {
	var e [8]byte
	for i := range e {
		e[i] = 'x'
	}
	rc := planFree(-1, unsafe.Pointer(&e[0]), 5)
	if rc != 2 || string(e[:]) != "capi\x00xxx" {
		t.Errorf("a 5-byte buffer holds %q (code %d), want the message's first 4 bytes and a NUL", e[:], rc)
	}
}

// Every entry point recovers a panic into code 2 and an internal error.
func TestRecoveredPanic(t *testing.T) {
	id := mustPlan(t, spec1D, []float64{1, 2, 3})
	testHook = func(fn string) {
		var s []int
		_ = s[len(fn)] // a runtime error, as a real bug would make
	}
	defer func() { testHook = nil }()
	src := make([]float64, 8)
	p := unsafe.Pointer(&src[0])
	var buf [256]byte
	for fn, call := range map[string]func(e *errBuf) int32{
		"ndconv_plan_new": func(e *errBuf) int32 {
			var out int64
			return planNew(cstr(spec1D), p, 3, &out, e.ptr(), e.len())
		},
		"ndconv_plan_info": func(e *errBuf) int32 { return planInfo(id, unsafe.Pointer(&buf[0]), 256, e.ptr(), e.len()) },
		"ndconv_plan_execute": func(e *errBuf) int32 {
			return planExecute(id, p, 64, p, 64, e.ptr(), e.len())
		},
		"ndconv_plan_free": func(e *errBuf) int32 { return planFree(id, e.ptr(), e.len()) },
	} {
		var e errBuf
		rc := call(&e)
		msg := e.String()
		if rc != 2 || !strings.HasPrefix(msg, "capi: internal error in "+fn+": runtime error: index out of range") ||
			!strings.Contains(msg, "api_test.go:") || strings.Contains(msg, "\n") {
			t.Errorf("%s with a panic = %d %q", fn, rc, msg)
		}
	}
}

// An output that overlaps the input gives the out-of-place result: in
// place (issue 34: up to 5217 off for a 5×5 kernel), and shifted views
// either way.
func TestExecuteOverlap(t *testing.T) {
	const n = 40
	w := make([]float64, 25)
	for i := range w {
		w[i] = float64(i%7) - 2.5
	}
	id := mustPlan(t, `{"shape":[40,40],"dtype":"float32","border":"reflect","kernel_shape":[5,5],"nkernels":1}`, w)
	x := make([]float32, n*n)
	for i := range x {
		x[i] = float32((i*37)%101) - 50
	}
	run := func(src, dst []float32) {
		t.Helper()
		var e errBuf
		if rc := planExecute(id, unsafe.Pointer(&src[0]), n*n*4, unsafe.Pointer(&dst[0]), n*n*4, e.ptr(), e.len()); rc != 0 {
			t.Fatalf("%d %s", rc, e.String())
		}
	}
	want := make([]float32, n*n)
	run(x, want)
	for _, shift := range []int{0, 1, -1, n, -3 * n, n*n - 1, -(n*n - 1)} {
		buf := make([]float32, 3*n*n)
		off := n * n
		src := buf[off : off+n*n]
		copy(src, x)
		dst := buf[off+shift : off+shift+n*n]
		run(src, dst)
		for i := range want {
			if dst[i] != want[i] {
				t.Errorf("output shifted by %d elements from the input: [%d] = %v, want %v", shift, i, dst[i], want[i])
				break
			}
		}
	}
}

// Inputs and outputs at any byte address (numpy allows misaligned arrays)
// give the aligned result, for kernel and filter plans.
func TestExecuteMisaligned(t *testing.T) {
	for _, spec := range []string{
		`{"shape":[6,7],"dtype":"float64","border":"wrap","kernel_shape":[3,2],"nkernels":1}`,
		`{"shape":[6,7],"dtype":"complex64","border":"wrap","kernel_shape":[3,2],"nkernels":1}`,
		`{"shape":[6,7],"dtype":"float64","border":"wrap","filter":"gaussian:sigma=1"}`,
	} {
		id := mustPlan(t, spec, []float64{1, -2, 3, 0.5, 4, -1}[:map[bool]int{true: 0, false: 6}[strings.Contains(spec, "filter")]])
		const nbytes = 6 * 7 * 8
		x := make([]byte, nbytes)
		for i := range x {
			x[i] = byte(i*7 + i/8)
		}
		for i := 7; i < nbytes; i += 8 {
			x[i] = 0x3f // finite, moderate values
		}
		run := func(src, dst []byte) {
			t.Helper()
			var e errBuf
			if rc := planExecute(id, unsafe.Pointer(&src[0]), nbytes, unsafe.Pointer(&dst[0]), nbytes, e.ptr(), e.len()); rc != 0 {
				t.Fatalf("%s: %d %s", spec, rc, e.String())
			}
		}
		want := make([]byte, nbytes)
		run(x, want)
		for _, off := range [][2]int{{1, 0}, {0, 3}, {5, 2}} {
			a, b := make([]byte, nbytes+8), make([]byte, nbytes+8)
			copy(a[off[0]:], x)
			run(a[off[0]:off[0]+nbytes], b[off[1]:off[1]+nbytes])
			if !bytes.Equal(b[off[1]:off[1]+nbytes], want) {
				t.Errorf("%s: input at +%d, output at +%d bytes: a different result", spec, off[0], off[1])
			}
		}
	}
}

// One handle used from many threads gives every caller the right result
// (calls on a plan are serialised), and a free racing with them makes each
// later call fail cleanly, never crash.
func TestConcurrentExecuteAndFree(t *testing.T) {
	w := []float64{1, -2, 3, 0.5, 4, -1, 2, 2, 1}
	var id int64
	var e errBuf
	spec := `{"shape":[32,32],"dtype":"float32","border":"reflect","kernel_shape":[3,3],"nkernels":1}`
	if rc := planNew(cstr(spec), f64ptr(w), int64(len(w)), &id, e.ptr(), e.len()); rc != 0 {
		t.Fatal(e.String())
	}
	x := make([]float32, 32*32)
	for i := range x {
		x[i] = float32(i%13) - 6
	}
	want := make([]float32, len(x))
	if rc := planExecute(id, unsafe.Pointer(&x[0]), 4096, unsafe.Pointer(&want[0]), 4096, e.ptr(), e.len()); rc != 0 {
		t.Fatal(e.String())
	}
	done := make(chan string)
	for g := range 8 {
		go func() {
			var e errBuf
			y := make([]float32, len(x))
			for i := range 20 {
				if g == 0 && i == 10 {
					if rc := planFree(id, e.ptr(), e.len()); rc != 0 {
						done <- "free: " + e.String()
						return
					}
				}
				rc := planExecute(id, unsafe.Pointer(&x[0]), 4096, unsafe.Pointer(&y[0]), 4096, e.ptr(), e.len())
				switch {
				case rc == 0 && !slices.Equal(y, want):
					done <- "a wrong result"
					return
				case rc != 0 && !strings.Contains(e.String(), "freed"):
					done <- e.String()
					return
				}
			}
			done <- ""
		}()
	}
	for range 8 {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}

// TestPlanBankLayout: "bank_layout":"planar" gives a bank's output with
// its kernel axis first (the info's shape and the values: the
// interleaved output with the bank axis moved), "interleaved" and ""
// today's; an unknown layout is an invalid request naming it.
func TestPlanBankLayout(t *testing.T) {
	w := []float64{1, 2, 3, -1, 0, 1} // two 1-D kernels of 3
	src := []float64{3, 1, 4, 1, 5, 9, 2, 6}
	run := func(layout string) ([]float64, string) {
		spec := `{"shape":[8],"dtype":"float64","border":"reflect","kernel_shape":[3],"nkernels":2` + layout + `}`
		id := mustPlan(t, spec, w)
		var buf [256]byte
		var e errBuf
		if rc := planInfo(id, unsafe.Pointer(&buf[0]), 256, e.ptr(), e.len()); rc != 0 {
			t.Fatalf("%s info: %d %s", layout, rc, e.String())
		}
		dst := make([]float64, 16)
		if rc := planExecute(id, unsafe.Pointer(&src[0]), 64, unsafe.Pointer(&dst[0]), 128, e.ptr(), e.len()); rc != 0 {
			t.Fatalf("%s: %d %s", layout, rc, e.String())
		}
		return dst, string(bytes.TrimRight(buf[:], "\x00"))
	}
	inter, info := run("")
	if !strings.Contains(info, `"shape":[8,2]`) {
		t.Errorf("interleaved info = %s", info)
	}
	if same, _ := run(`,"bank_layout":"interleaved"`); !slices.Equal(same, inter) {
		t.Errorf("interleaved: %v, want %v", same, inter)
	}
	planar, info := run(`,"bank_layout":"planar"`)
	if !strings.Contains(info, `"shape":[2,8]`) {
		t.Errorf("planar info = %s, want shape [2,8]", info)
	}
	for v := range 8 {
		for k := range 2 {
			if planar[k*8+v] != inter[v*2+k] {
				t.Fatalf("planar %v is not interleaved %v with its bank axis first", planar, inter)
			}
		}
	}
	var id int64
	var e errBuf
	spec := `{"shape":[8],"dtype":"float64","border":"reflect","kernel_shape":[3],"nkernels":2,"bank_layout":"nchw"}`
	rc := planNew(cstr(spec), f64ptr(w), 6, &id, e.ptr(), e.len())
	wantErr(t, "bank_layout nchw", rc, &e, 1, `bank layout "nchw"`)
}
