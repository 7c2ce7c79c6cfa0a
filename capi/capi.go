//go:build cgo

package main

/*
#include <stdint.h>
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/plan"
)

func main() {}

// request is the JSON a caller describes a plan with.
type request struct {
	Op       string  `json:"op"` // correlate or convolve
	Shape    []int   `json:"shape"`
	DType    string  `json:"dtype"`
	OutDType string  `json:"out_dtype"` // "" means the input's
	Border   string  `json:"border"`
	CVal     float64 `json:"cval"`
	CValImag float64 `json:"cval_imag"` // of complex data
	Origin   []int   `json:"origin"`
	Axes     []int   `json:"axes"`
	Mode     string  `json:"mode"`
	Device   string  `json:"device"`
	Method   string  `json:"method"`
	Workers  int     `json:"workers"`
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

// handle is a prepared plan: either a kernel plan, which writes into the
// caller's output, or a filter plan, whose output is copied there.
type handle struct {
	mu     sync.Mutex
	plan   *ndconv.Plan
	filter *ndconv.FilterPlan
	in     nd.DType
	shape  []int
}

// close releases the plan's device, once no call is using it.
func (h *handle) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.plan != nil {
		h.plan.Close()
	}
	if h.filter != nil {
		h.filter.Close()
	}
}

var (
	handlesMu sync.Mutex
	handles   = map[int64]*handle{}
	nextID    int64
)

// errorCode classifies err for the caller: 1 for a request that is
// invalid or unsupported, 2 for anything else.
func errorCode(err error) C.int {
	var ae *nd.ArgumentError
	var ue *nd.UnsupportedError
	var se *filters.SyntaxError
	var uf *filters.UnknownFilterError
	var pe *filters.ParameterError
	var re *filters.RankError
	if errors.As(err, &ae) || errors.As(err, &ue) || errors.As(err, &se) || errors.As(err, &uf) || errors.As(err, &pe) || errors.As(err, &re) {
		return 1
	}
	return 2
}

// fail writes err's message into the caller's buffer and returns its code.
func fail(err error, buf *C.char, n C.int) C.int {
	if buf != nil && n > 0 {
		msg := err.Error()
		dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
		k := copy(dst[:len(dst)-1], msg)
		dst[k] = 0
	}
	return errorCode(err)
}

//export ndconv_plan_new
func ndconv_plan_new(spec *C.char, weights *C.double, nweights C.int64_t, out *C.int64_t, errbuf *C.char, errlen C.int) C.int {
	var r request
	if err := json.Unmarshal([]byte(C.GoString(spec)), &r); err != nil {
		return fail(fmt.Errorf("capi: malformed request: %w", err), errbuf, errlen)
	}
	w := slices.Clone(unsafe.Slice((*float64)(unsafe.Pointer(weights)), int(nweights)))
	h, err := newHandle(r, w)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	handlesMu.Lock()
	nextID++
	handles[nextID] = h
	*out = C.int64_t(nextID)
	handlesMu.Unlock()
	return 0
}

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
		if opt.Method, err = plan.ParseMethod(r.Method); err != nil {
			return nil, err
		}
	}
	if r.Workers < 0 {
		return nil, &nd.ArgumentError{Arg: "workers", Msg: fmt.Sprintf("%d is negative (0 means all cores)", r.Workers)}
	}
	opt.CVal, opt.CValImag, opt.Origin, opt.Axes, opt.Device, opt.Workers = r.CVal, r.CValImag, r.Origin, r.Axes, r.Device, r.Workers
	h := &handle{in: in, shape: slices.Clone(r.Shape)}
	if r.Filter != "" {
		named, err := filters.Parse(r.Filter)
		if err != nil {
			return nil, err
		}
		fs, err := ndconv.BuildFilters(len(r.Shape), r.Axes, named)
		if err != nil {
			return nil, err
		}
		h.filter, err = ndconv.NewFilterPlan(op, r.Shape, in, opt, fs...)
		return h, err
	}
	kernels, err := kernelsOf(r, w)
	if err != nil {
		return nil, err
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
	parts := 1
	if r.ComplexWeights {
		parts = 2
	}
	if r.NKernels < 1 || parts*n*r.NKernels != len(w) {
		return nil, &nd.ArgumentError{Arg: "kernel", Msg: fmt.Sprintf("%d kernels of shape %v need %d weights, got %d", r.NKernels, r.KernelShape, parts*n*r.NKernels, len(w))}
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

// info is what ndconv_plan_info reports.
type info struct {
	Shape  []int  `json:"shape"`
	DType  string `json:"dtype"`
	Method string `json:"method"`
	Device string `json:"device"`
}

func lookup(id C.int64_t) (*handle, error) {
	handlesMu.Lock()
	defer handlesMu.Unlock()
	h, ok := handles[int64(id)]
	if !ok {
		return nil, fmt.Errorf("capi: no plan %d (freed?)", int64(id))
	}
	return h, nil
}

//export ndconv_plan_info
func ndconv_plan_info(id C.int64_t, buf *C.char, n C.int, errbuf *C.char, errlen C.int) C.int {
	h, err := lookup(id)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	var in info
	if h.plan != nil {
		in = info{h.plan.Shape(), h.plan.DType().String(), h.plan.Method().String(), h.plan.Device()}
	} else {
		in = info{h.filter.Shape(), h.filter.DType().String(), h.filter.Method(), h.filter.Device()}
	}
	b, _ := json.Marshal(in)
	if len(b)+1 > int(n) {
		return fail(fmt.Errorf("capi: info needs %d bytes", len(b)+1), errbuf, errlen)
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
	dst[copy(dst, b)] = 0
	return 0
}

// view makes an Array of the n elements of dt at p without copying.
func view(dt nd.DType, shape []int, p unsafe.Pointer, nbytes int64) (nd.Array, error) {
	n, err := nd.NumElements(shape)
	if err != nil {
		return nd.Array{}, err
	}
	if int64(n)*int64(dt.Size()) != nbytes {
		return nd.Array{}, &nd.ArgumentError{Arg: "array", Msg: fmt.Sprintf("%v %v needs %d bytes, the buffer has %d", dt, shape, n*dt.Size(), nbytes)}
	}
	if !dt.Valid() {
		return nd.Array{}, &nd.UnsupportedError{What: "dtype", Value: dt.String()}
	}
	var b []byte
	if n > 0 {
		b = unsafe.Slice((*byte)(p), nbytes)
	}
	return nd.Array{Shape: slices.Clone(shape), Data: nd.ViewBytes(dt, b)}, nil
}

//export ndconv_plan_execute
func ndconv_plan_execute(id C.int64_t, src unsafe.Pointer, srcBytes C.int64_t, dst unsafe.Pointer, dstBytes C.int64_t, errbuf *C.char, errlen C.int) C.int {
	h, err := lookup(id)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	in, err := view(h.in, h.shape, src, int64(srcBytes))
	if err != nil {
		return fail(fmt.Errorf("input: %w", err), errbuf, errlen)
	}
	outType, outShape := nd.Unspecified, []int(nil)
	if h.plan != nil {
		outType, outShape = h.plan.DType(), h.plan.Shape()
	} else {
		outType, outShape = h.filter.DType(), h.filter.Shape()
	}
	out, err := view(outType, outShape, dst, int64(dstBytes))
	if err != nil {
		return fail(fmt.Errorf("output: %w", err), errbuf, errlen)
	}
	ctx := context.Background()
	if h.plan != nil {
		_, err = h.plan.Execute(ctx, out, in)
	} else {
		var got nd.Array
		if got, err = h.filter.Execute(ctx, in); err == nil {
			copy(out.Bytes(), got.Bytes())
		}
	}
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	return 0
}

//export ndconv_plan_free
func ndconv_plan_free(id C.int64_t) {
	handlesMu.Lock()
	h := handles[int64(id)]
	delete(handles, int64(id))
	handlesMu.Unlock()
	if h != nil {
		h.close()
	}
}
