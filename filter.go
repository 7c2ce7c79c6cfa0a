package ndconv

import (
	"context"
	"errors"
	"fmt"
	"image"
	"slices"
	"strings"

	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

// Filter applies named filters (filters.Gaussian, filters.Sobel, a
// filters.GaborBank, …) to src as scipy.ndimage's functions of the same
// name do. Each filter spans opt.Axes, or every axis of src when opt.Axes
// is empty (so give the spatial axes of an H×W×C image: Axes: []int{0, 1}).
// One filter gives an output shaped like Correlate's; several filters, or a
// bank such as filters.GaborBank, give a trailing axis of one value per
// filter, as a kernel bank does (a leading one, a plane per filter, with
// Options.BankLayout Planar).
func Filter(ctx context.Context, src Array, opt Options, named ...filters.Named) (Array, error) {
	if err := checkContext(ctx); err != nil {
		return Array{}, err
	}
	fs, err := BuildFilters(len(src.Shape), opt.Axes, named...)
	if err != nil {
		return Array{}, err
	}
	return ApplyFilters(ctx, Correlation, src, opt, fs...)
}

// FilterImage applies named filters to each colour channel of img and
// returns an image of the same Go type, rounding once at the end into the
// image's samples. The filters must make one output per pixel (not a bank).
func FilterImage(ctx context.Context, img image.Image, opt Options, named ...filters.Named) (image.Image, error) {
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	src, err := imageArray(img, opt)
	if err != nil {
		return nil, err
	}
	opt.Axes = []int{0, 1}
	out, err := Filter(ctx, src, opt, named...)
	if err != nil {
		return nil, err
	}
	if len(out.Shape) != len(src.Shape) {
		return nil, &nd.ArgumentError{Arg: "filters", Msg: "a bank's output has one value per filter and is not an image; use Filter with imageio.FromImage"}
	}
	return imageio.ToImage(out, img)
}

// BuildFilters fits named filters to the axes they will span: len(axes)
// of them, or rank when axes is empty.
func BuildFilters(rank int, axes []int, named ...filters.Named) ([]filters.Filter, error) {
	if len(axes) > 0 {
		rank = len(axes)
	}
	var fs []filters.Filter
	for _, n := range named {
		if n == nil {
			return nil, &nd.ArgumentError{Arg: "filters", Msg: "a nil filter"}
		}
		built, err := n.Build(rank)
		if err != nil {
			return nil, err
		}
		fs = append(fs, built...)
	}
	return fs, nil
}

// KernelFilter wraps a kernel as a filter, so that kernels and named
// filters can make one bank.
func KernelFilter(name string, k Kernel) filters.Filter {
	return filters.Filter{Name: name, Terms: []Kernel{k}, Combine: filters.Single}
}

// ApplyFilters correlates (or convolves) src with each filter and returns
// one output, or a bank of them in a trailing axis: NewFilterPlan, then
// Execute.
func ApplyFilters(ctx context.Context, op Operation, src Array, opt Options, fs ...filters.Filter) (Array, error) {
	if err := checkContext(ctx); err != nil {
		return Array{}, err
	}
	if err := src.Check(); err != nil {
		return Array{}, fmt.Errorf("input: %w", err)
	}
	p, err := NewFilterPlan(op, src.Shape, src.DType(), opt, fs...)
	if err != nil {
		return Array{}, err
	}
	defer p.Close()
	return p.Execute(ctx, src)
}

// A FilterPlan applies filters to inputs of one shape and dtype, as many
// times as wanted. Single-term filters of one shape run as one kernel bank,
// reading the input once. A filter of several terms (gradient magnitude,
// Laplacian of Gaussian) computes its terms in float, combines them, and
// rounds once into the output dtype, as scipy's float results would be
// rounded.
type FilterPlan struct {
	bank    *Plan   // all filters as one kernel bank, or
	terms   []*Plan // one plan per filter, computing its terms in float
	filters []filters.Filter
	out     DType
	shape   []int // the output's, with the bank axis when there is one
	// planar: filters of several terms, more than one, whose outputs go
	// to planes (Options.BankLayout Planar); a bank of single-term
	// filters is its plan's.
	planar bool
	// progress receives ExecuteChunks' chunks of filters of several terms.
	progress nd.Progress
}

// errNoFilterPlan is the error of a nil or zero FilterPlan's methods.
var errNoFilterPlan = &nd.ArgumentError{Arg: "plan", Msg: "a nil or zero FilterPlan (make one with NewFilterPlan)"}

// NewFilterPlan plans filters for inputs of the given shape and dtype.
func NewFilterPlan(op Operation, shape []int, dtype DType, opt Options, fs ...filters.Filter) (*FilterPlan, error) {
	if len(fs) == 0 {
		return nil, &nd.ArgumentError{Arg: "filters", Msg: "no filter given"}
	}
	fp := &FilterPlan{filters: fs, progress: opt.Progress}
	if kernels, ok := oneBank(fs); ok {
		p, err := NewPlan(op, shape, dtype, opt, kernels...)
		if err != nil {
			return nil, err
		}
		fp.bank, fp.out, fp.shape = p, p.DType(), p.Shape()
		return fp, nil
	}
	fp.out = opt.DType
	if fp.out == nd.Unspecified {
		fp.out = dtype
	}
	if dtype.IsComplex() || fp.out.IsComplex() {
		for _, f := range fs {
			if len(f.Terms) > 1 {
				return nil, &nd.ArgumentError{Arg: "filters", Msg: fmt.Sprintf("%s combines several terms and takes real data only; complex data takes single-kernel filters", f.Name)}
			}
		}
	}
	// Terms are computed in float64 where the output or input needs it
	// (as the engine accumulates), in float32 otherwise.
	if err := checkBankLayout(opt.BankLayout); err != nil {
		return nil, err
	}
	termOpt := opt
	termOpt.BankLayout = Interleaved // a filter's terms, combined voxel by voxel
	termOpt.DType = nd.Float32
	if fp.out == nd.Float64 || dtype.WideInput() {
		termOpt.DType = nd.Float64
	}
	for i, f := range fs {
		termOpt.Progress = nd.PartProgress(opt.Progress, i, len(fs))
		p, err := NewPlan(op, shape, dtype, termOpt, f.Terms...)
		if err != nil {
			return nil, fmt.Errorf("filter %s: %w", f.Name, err)
		}
		outShape := p.Shape()
		if len(f.Terms) > 1 {
			outShape = outShape[:len(outShape)-1]
		}
		if i == 0 {
			fp.shape = slices.Clone(outShape)
		} else if !slices.Equal(fp.shape, outShape) {
			return nil, &nd.ArgumentError{Arg: "filters", Msg: fmt.Sprintf("%s gives shape %v, %s gives %v: a bank's outputs must have one shape (use mode same)", fs[0].Name, fp.shape, f.Name, outShape)}
		}
		fp.terms = append(fp.terms, p)
	}
	if len(fs) > 1 {
		fp.shape = append(fp.shape, len(fs))
		if opt.BankLayout == Planar {
			fp.planar, fp.shape = true, nd.PlanarShape(fp.shape)
		}
	}
	return fp, nil
}

// Shape is the output's shape, DType its element type.
func (fp *FilterPlan) Shape() []int {
	if fp == nil {
		return nil
	}
	return slices.Clone(fp.shape)
}

// Close releases what the plan's kernel plans hold on their device (see
// Plan.Close); executing it afterwards is an error.
func (fp *FilterPlan) Close() error {
	if fp == nil {
		return nil
	}
	var errs []error
	if fp.bank != nil {
		errs = append(errs, fp.bank.Close())
	}
	for _, p := range fp.terms {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// DType is the output's element type.
func (fp *FilterPlan) DType() DType {
	if fp == nil {
		return nd.Unspecified
	}
	return fp.out
}

// Method names how the filters run: the method of the bank, or of each
// filter's terms.
func (fp *FilterPlan) Method() string {
	if fp == nil {
		return ""
	}
	if fp.bank != nil {
		return fp.bank.Method().String()
	}
	var names []string
	for _, p := range fp.terms {
		if m := p.Method().String(); !slices.Contains(names, m) {
			names = append(names, m)
		}
	}
	return strings.Join(names, "+")
}

// Device names where the filters run.
func (fp *FilterPlan) Device() string {
	switch {
	case fp == nil:
		return ""
	case fp.bank != nil:
		return fp.bank.Device()
	case len(fp.terms) == 0:
		return ""
	}
	return fp.terms[0].Device()
}

// Compile compiles the GPU kernels of every plan now (Plan.Compile).
func (fp *FilterPlan) Compile() error {
	if fp == nil || fp.bank == nil && len(fp.terms) == 0 {
		return errNoFilterPlan
	}
	if fp.bank != nil {
		return fp.bank.Compile()
	}
	for _, p := range fp.terms {
		if err := p.Compile(); err != nil {
			return err
		}
	}
	return nil
}

// DeviceChoice says why auto chose the device (Plan.DeviceChoice): the
// bank's, or the first filter's.
func (fp *FilterPlan) DeviceChoice() string {
	switch {
	case fp == nil:
		return ""
	case fp.bank != nil:
		return fp.bank.DeviceChoice()
	case len(fp.terms) == 0:
		return ""
	}
	return fp.terms[0].DeviceChoice()
}

// Execute filters src, which must have the planned shape and dtype, into
// a new array.
func (fp *FilterPlan) Execute(ctx context.Context, src Array) (Array, error) {
	return fp.ExecuteInto(ctx, Array{}, src)
}

// ExecuteInto filters src into dst (of the plan's Shape and DType; a zero
// Array: a new one) and returns it: a caller that allocates its outputs
// ahead (or reuses them) keeps that work out of the execution.
func (fp *FilterPlan) ExecuteInto(ctx context.Context, dst, src Array) (Array, error) {
	if fp == nil || fp.bank == nil && len(fp.terms) == 0 {
		return Array{}, errNoFilterPlan
	}
	if err := checkContext(ctx); err != nil {
		return Array{}, err
	}
	if fp.bank != nil {
		return fp.bank.Execute(ctx, dst, src)
	}
	if dst.Data == nil {
		var err error
		if dst, err = nd.New(fp.out, fp.shape...); err != nil {
			return Array{}, err
		}
	} else if err := dst.Check(); err != nil {
		return Array{}, fmt.Errorf("output: %w", err)
	} else if dst.DType() != fp.out || !slices.Equal(dst.Shape, fp.shape) {
		return Array{}, &nd.ArgumentError{Arg: "output", Msg: fmt.Sprintf("%v %v does not match the plan's %v %v", dst.DType(), dst.Shape, fp.out, fp.shape)}
	}
	for i, p := range fp.terms {
		terms, err := p.Execute(ctx, Array{}, src)
		if err != nil {
			return Array{}, fmt.Errorf("filter %s: %w", fp.filters[i].Name, err)
		}
		f := fp.filters[i]
		values := combineTerms(f.Combine, terms.Float64s(), len(f.Terms))
		if fp.planar {
			nd.Store(dst.Data, i*len(values), 1, values) // filter i's plane
		} else {
			nd.Store(dst.Data, i, len(fp.filters), values)
		}
	}
	return dst, nil
}

// oneBank returns the filters' kernels when every filter is a single
// kernel and all have one shape, so that they run as one bank.
func oneBank(fs []filters.Filter) ([]Kernel, bool) {
	var kernels []Kernel
	for _, f := range fs {
		if len(f.Terms) != 1 || f.Combine != filters.Single {
			return nil, false
		}
		k := f.Terms[0]
		if len(kernels) > 0 && !slices.Equal(k.Extents(), kernels[0].Extents()) {
			return nil, false
		}
		kernels = append(kernels, k)
	}
	return kernels, true
}

// combineTerms combines n interleaved term outputs (values[v*n + t]).
func combineTerms(c filters.Combine, values []float64, n int) []float64 {
	if n == 1 {
		return c.Apply(nil, values)
	}
	terms := make([][]float64, n)
	for t := range terms {
		terms[t] = make([]float64, len(values)/n)
		for v := range terms[t] {
			terms[t][v] = values[v*n+t]
		}
	}
	return c.Apply(nil, terms...)
}
