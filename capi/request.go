package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/nd"
)

// request is the JSON a caller describes a plan with.
type request struct {
	Op       string    `json:"op"` // correlate or convolve
	Shape    []int     `json:"shape"`
	DType    string    `json:"dtype"`
	OutDType string    `json:"out_dtype"` // "" means the input's
	Border   string    `json:"border"`
	CVal     jsonFloat `json:"cval"`
	CValImag jsonFloat `json:"cval_imag"` // of complex data
	Origin   []int     `json:"origin"`
	Axes     []int     `json:"axes"`
	Mode     string    `json:"mode"`
	Device   string    `json:"device"`
	Method   string    `json:"method"`
	Workers  int       `json:"workers"`
	// BankLayout is a bank's output layout: "interleaved" (or "", the
	// kernel axis last) or "planar" (first: Options.BankLayout).
	BankLayout string `json:"bank_layout"`
	// DeviceArrays makes a plan for arrays in the device's memory
	// (ndconv_plan_execute_device) besides host arrays; Device must then
	// name a CUDA device.
	DeviceArrays bool `json:"device_arrays"`
	// Either a named filter ("gaussian:sigma=2"), or kernels: NKernels
	// dense kernels of KernelShape (the weights in C order, one after
	// another), or with Factors one separable kernel whose 1-D factors,
	// one per kernel axis, follow one another in the weights. With
	// ComplexWeights the dense kernels' weights are complex, each as its
	// real and imaginary part (numpy's complex128 memory).
	Filter         string `json:"filter"`
	KernelShape    []int  `json:"kernel_shape"`
	NKernels       int    `json:"nkernels"`
	Factors        bool   `json:"factors"`
	ComplexWeights bool   `json:"complex_weights"`
}

// jsonFloat is a float64 that JSON carries as a number or, where it is not
// finite (JSON has no NaN or Infinity), as one of the strings "nan", "inf"
// and "-inf" ("+inf", "infinity" and any case are read too).
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"nan"`), nil
	case math.IsInf(v, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-inf"`), nil
	}
	return json.Marshal(v)
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch strings.ToLower(s) {
		case "nan":
			*f = jsonFloat(math.NaN())
		case "inf", "+inf", "infinity", "+infinity":
			*f = jsonFloat(math.Inf(1))
		case "-inf", "-infinity":
			*f = jsonFloat(math.Inf(-1))
		default:
			return fmt.Errorf("%s is not a number (give a JSON number, or \"nan\", \"inf\" or \"-inf\")", strconv.Quote(s))
		}
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jsonFloat(v)
	return nil
}

// maxRequest bounds a request's JSON: a description, not data.
const maxRequest = 1 << 20

// decodeRequest reads and checks a request: one JSON object of request's
// fields and nothing else (an unknown field is a caller's typo, refused
// rather than ignored), with what the library would not check itself, or
// not before it allocated, checked here.
func decodeRequest(spec []byte) (request, error) {
	var r request
	if len(spec) > maxRequest {
		return r, &nd.ArgumentError{Arg: "request", Msg: fmt.Sprintf("%d bytes of JSON is more than a request's %d", len(spec), maxRequest)}
	}
	dec := json.NewDecoder(bytes.NewReader(spec))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, &nd.ArgumentError{Arg: "request", Msg: "malformed JSON: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return r, &nd.ArgumentError{Arg: "request", Msg: "malformed JSON: data after the request's object"}
	}
	if len(r.Shape) == 0 {
		// scipy.ndimage and the CLI refuse a 0-d input too; the library
		// would read it as one element.
		return r, &nd.ArgumentError{Arg: "shape", Msg: "a 0-D array has no axis to filter"}
	}
	if r.Workers < 0 {
		return r, &nd.ArgumentError{Arg: "workers", Msg: fmt.Sprintf("%d is negative (0 means all cores)", r.Workers)}
	}
	if r.Filter != "" && (r.Factors || r.ComplexWeights || r.NKernels != 0 || r.KernelShape != nil) {
		return r, &nd.ArgumentError{Arg: "kernel", Msg: "a named filter takes no kernel, factors or weights"}
	}
	return r, nil
}

// newHandle prepares the plan r describes with the weights w.
func newHandle(r request, w []float64) (*handle, error) {
	var opt ndconv.Options
	var err error
	op := ndconv.Correlation
	switch r.Op {
	case "correlate", "":
	case "convolve":
		op = ndconv.Convolution
	default:
		return nil, &nd.UnsupportedError{What: "operation", Value: r.Op, Supported: "correlate, convolve"}
	}
	in, err := nd.ParseDType(r.DType)
	if err != nil {
		return nil, err
	}
	if r.OutDType != "" {
		if opt.DType, err = nd.ParseDType(r.OutDType); err != nil {
			return nil, err
		}
	}
	if opt.Border, err = nd.ParseBorder(r.Border); err != nil {
		return nil, err
	}
	if r.Mode != "" {
		if opt.Mode, err = nd.ParseMode(r.Mode); err != nil {
			return nil, err
		}
	}
	if r.Method != "" {
		if opt.Method, err = ndconv.ParseMethod(r.Method); err != nil {
			return nil, err
		}
	}
	if r.BankLayout != "" {
		if opt.BankLayout, err = ndconv.ParseBankLayout(r.BankLayout); err != nil {
			return nil, err
		}
	}
	opt.CVal, opt.CValImag, opt.Origin, opt.Axes, opt.Device, opt.Workers = float64(r.CVal), float64(r.CValImag), r.Origin, r.Axes, r.Device, r.Workers
	h := &handle{in: in, shape: slices.Clone(r.Shape)}
	if r.Filter != "" {
		if len(w) != 0 {
			return nil, &nd.ArgumentError{Arg: "kernel", Msg: fmt.Sprintf("a named filter takes no weights, got %d", len(w))}
		}
		named, err := filters.Parse(r.Filter)
		if err != nil {
			return nil, err
		}
		fs, err := ndconv.BuildFilters(len(r.Shape), r.Axes, named)
		if err != nil {
			return nil, err
		}
		if len(fs) == 1 && len(fs[0].Terms) == 1 && fs[0].Combine == filters.Single {
			// One kernel (sobel, a Gaussian, a uniform box): the kernel
			// plan that a FilterPlan would wrap, run directly, so that it
			// writes the caller's output with no array of its own to
			// allocate and copy (a small call's cost), the same bits —
			// on device arrays too, as the same plan.
			if r.DeviceArrays {
				if h.dev, err = sharedDevice(r.Device); err != nil {
					return nil, err
				}
				h.plan, err = h.dev.NewPlan(op, r.Shape, in, opt, fs[0].Terms[0])
				return h, err
			}
			h.plan, err = ndconv.NewPlan(op, r.Shape, in, opt, fs[0].Terms[0])
			return h, err
		}
		if r.DeviceArrays {
			// Several terms combine on the host (FilterPlan); the Python
			// face combines device terms with the array's library.
			return nil, &nd.UnsupportedError{What: "named filter of several terms on device arrays", Value: r.Filter, Supported: "filters of one kernel"}
		}
		h.filter, err = ndconv.NewFilterPlan(op, r.Shape, in, opt, fs...)
		return h, err
	}
	kernels, err := kernelsOf(r, w)
	if err != nil {
		return nil, err
	}
	if r.DeviceArrays {
		if h.dev, err = sharedDevice(r.Device); err != nil {
			return nil, err
		}
		h.plan, err = h.dev.NewPlan(op, r.Shape, in, opt, kernels...)
		return h, err
	}
	h.plan, err = ndconv.NewPlan(op, r.Shape, in, opt, kernels...)
	return h, err
}

// kernelsOf splits the weights into the request's kernels.
func kernelsOf(r request, w []float64) ([]ndconv.Kernel, error) {
	if r.Factors && r.ComplexWeights {
		return nil, &nd.ArgumentError{Arg: "kernel", Msg: "factors are real; give a complex kernel as dense weights"}
	}
	if r.Factors {
		var factors [][]float64
		for _, n := range r.KernelShape {
			if n < 0 || n > len(w) {
				return nil, &nd.ArgumentError{Arg: "kernel", Msg: fmt.Sprintf("factor of %d taps with %d weights left", n, len(w))}
			}
			factors, w = append(factors, w[:n]), w[n:]
		}
		if len(w) != 0 {
			return nil, &nd.ArgumentError{Arg: "kernel", Msg: fmt.Sprintf("%d weights beyond the factors", len(w))}
		}
		return []ndconv.Kernel{ndconv.SeparableKernel(factors...)}, nil
	}
	n, err := nd.NumElements(r.KernelShape)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, &nd.ArgumentError{Arg: "kernel", Msg: fmt.Sprintf("shape %v has no taps (an axis of length 0)", r.KernelShape)}
	}
	parts := 1
	if r.ComplexWeights {
		parts = 2
	}
	// Checked by division: a product of the request's counts may overflow,
	// and an empty kernel shape must not make any count of kernels fit.
	if n == 0 || r.NKernels < 1 || len(w)%(parts*n) != 0 || len(w)/(parts*n) != r.NKernels {
		return nil, &nd.ArgumentError{Arg: "kernel", Msg: fmt.Sprintf("%d kernels of shape %v need %s weights, got %d", r.NKernels, r.KernelShape, weightsNeeded(parts, n, r.NKernels), len(w))}
	}
	var ks []ndconv.Kernel
	for i := range r.NKernels {
		if !r.ComplexWeights {
			ks = append(ks, ndconv.NewKernel(r.KernelShape, w[i*n:(i+1)*n]))
			continue
		}
		c := make([]complex128, n)
		for j := range c {
			c[j] = complex(w[2*(i*n+j)], w[2*(i*n+j)+1])
		}
		ks = append(ks, ndconv.ComplexKernel(r.KernelShape, c))
	}
	return ks, nil
}

// weightsNeeded is parts·n·k for a message, or "more than 2^63" where the
// product overflows.
func weightsNeeded(parts, n, k int) string {
	if k < 1 {
		return "at least one kernel's"
	}
	if n > math.MaxInt/parts/k {
		return "more than 2^63"
	}
	return strconv.Itoa(parts * n * k)
}
