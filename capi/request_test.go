package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/ndconv/ndconv/nd"
)

func TestNonFiniteCVal(t *testing.T) {
	for _, c := range []struct {
		json string
		want float64
	}{
		{`"nan"`, math.NaN()}, {`"NaN"`, math.NaN()}, {`"inf"`, math.Inf(1)}, {`"+Infinity"`, math.Inf(1)},
		{`"-inf"`, math.Inf(-1)}, {`-1.5e3`, -1500}, {`null`, 0},
	} {
		r, err := decodeRequest([]byte(`{"shape":[4],"cval":` + c.json + `}`))
		got := float64(r.CVal)
		if err != nil || !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("cval %s = %v, %v; want %v", c.json, got, err, c.want)
		}
		// And back: JSON has no NaN or Inf literal, the strings carry them.
		b, err := json.Marshal(r)
		if err != nil || bytes.Contains(b, []byte("NaN")) || bytes.Contains(b, []byte("+Inf")) {
			t.Errorf("cval %s encodes as %s, %v", c.json, b, err)
		}
	}
	// An infinite cval reaches the library: the border is infinite.
	var e errBuf
	var id int64
	w := []float64{1, 2, 3}
	spec := `{"shape":[4],"dtype":"float64","border":"constant","cval":"-inf","kernel_shape":[3],"nkernels":1}`
	if rc := planNew(cstr(spec), f64ptr(w), 3, &id, e.ptr(), e.len()); rc != 0 {
		t.Fatal(e.String())
	}
	defer planFree(id, nil, 0)
	x, y := []float64{1, 2, 3, 4}, make([]float64, 4)
	if rc := planExecute(id, unsafe.Pointer(&x[0]), 32, unsafe.Pointer(&y[0]), 32, e.ptr(), e.len()); rc != 0 {
		t.Fatal(e.String())
	}
	if want := []float64{math.Inf(-1), 14, 20, math.Inf(-1)}; !slices.Equal(y, want) {
		t.Errorf("cval -inf: %v, want %v", y, want)
	}
}

// bigNumber finds a filter parameter that may make a large kernel.
var bigNumber = regexp.MustCompile(`[0-9]{3}|[eE]`)

// fuzzSmall says whether r is cheap enough to build and run in a fuzz
// iteration, on the CPU.
func fuzzSmall(r request) bool {
	small := func(s []int, rank, elems int) bool {
		if len(s) > rank {
			return false
		}
		n := 1
		for _, v := range s {
			if v < 0 {
				return true // the library refuses it before allocating
			}
			if v > elems {
				return false
			}
			n *= v
		}
		return n <= elems
	}
	return small(r.Shape, 5, 1<<12) && small(r.KernelShape, 5, 1<<8) && r.NKernels <= 16 &&
		len(r.Filter) < 64 && !bigNumber.MatchString(r.Filter) &&
		(r.Device == "" || r.Device == "auto" || r.Device == "cpu")
}

// FuzzRequest: any request text and count of weights is decoded without
// a panic; what decodes encodes back to itself; a small one that the
// library accepts executes on zeros, through the entry points C calls.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		spec1D,
		`{"op":"convolve","shape":[5,6],"dtype":"uint8","out_dtype":"float32","border":"constant","cval":"nan","kernel_shape":[2,3],"nkernels":2}`,
		`{"shape":[5,6],"dtype":"float32","border":"wrap","cval":"inf","kernel_shape":[3,1],"factors":true,"method":"separable"}`,
		`{"shape":[4,4],"dtype":"complex64","border":"mirror","cval":1.5,"cval_imag":-2,"kernel_shape":[3],"nkernels":1,"complex_weights":true,"origin":[1]}`,
		`{"shape":[7,3,2],"dtype":"int16","border":"nearest","filter":"gaussian:sigma=1.5,order=0,truncate=4.0","axes":[0,1]}`,
		`{"shape":[9],"dtype":"float64","border":"reflect","kernel_shape":[3],"nkernels":1,"mode":"full","workers":1}`,
		`{"shape":[0,3],"dtype":"float32","border":"reflect","kernel_shape":[2],"nkernels":1}`,
		`{"shape":[],"dtype":"float64","border":"reflect","kernel_shape":[],"nkernels":1}`,
		`{"shape":[4],"cval":"-infinity","extra":1}`,
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, spec []byte, nw uint8) {
		r, err := decodeRequest(spec)
		if err != nil {
			var ae *nd.ArgumentError
			if !errors.As(err, &ae) {
				t.Fatalf("decodeRequest(%q) = %v, not an ArgumentError", spec, err)
			}
			return
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("a decoded request does not encode: %v", err)
		}
		r2, err := decodeRequest(b)
		if err != nil {
			t.Fatalf("%s, encoded from %q, does not decode: %v", b, spec, err)
		}
		if b2, _ := json.Marshal(r2); !bytes.Equal(b, b2) {
			t.Fatalf("%q decodes as %s, then as %s", spec, b, b2)
		}
		if !fuzzSmall(r) {
			return
		}
		// One worker: any panic stays on this goroutine, where the entry
		// point's recovery reports it.
		r.Workers = 1
		b, _ = json.Marshal(r)
		w := make([]float64, nw)
		for i := range w {
			w[i] = float64(i%5) - 1.5
		}
		var e errBuf
		var id int64
		rc := planNew(cstr(string(b)), f64ptr(w), int64(len(w)), &id, e.ptr(), e.len())
		if rc != 0 {
			if strings.Contains(e.String(), "internal error") {
				t.Fatalf("planNew(%s) panicked: %s", b, e.String())
			}
			return
		}
		defer planFree(id, nil, 0)
		var ib [1024]byte
		if rc := planInfo(id, unsafe.Pointer(&ib[0]), int32(len(ib)), e.ptr(), e.len()); rc != 0 {
			t.Fatalf("info of %s: %s", b, e.String())
		}
		var in info
		if err := json.Unmarshal(bytes.TrimRight(ib[:], "\x00"), &in); err != nil {
			t.Fatalf("info of %s: %v", b, err)
		}
		inType, _ := nd.ParseDType(r.DType)
		outType, err := nd.ParseDType(in.DType)
		if err != nil {
			t.Fatalf("info of %s: %v", b, err)
		}
		ni, _ := nd.NumElements(r.Shape)
		no, err := nd.NumElements(in.Shape)
		if err != nil || no > 1<<20 {
			t.Fatalf("info of %s: shape %v (%v)", b, in.Shape, err)
		}
		src := make([]byte, ni*inType.Size()+8)
		dst := make([]byte, no*outType.Size()+8)
		// 8-aligned: Go allocates these at least that aligned.
		rc = planExecute(id, unsafe.Pointer(unsafe.SliceData(src)), int64(ni*inType.Size()), unsafe.Pointer(unsafe.SliceData(dst)), int64(no*outType.Size()), e.ptr(), e.len())
		if rc != 0 {
			t.Fatalf("execute of %s on zeros: %d %s", b, rc, e.String())
		}
	})
}
