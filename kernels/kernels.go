package kernels

import (
	"embed"
	"fmt"
	"slices"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

//go:embed portability.h *.cl
var sources embed.FS

// standalone families need none of common.cl's helpers (nor its defines).
var standalone = map[string]bool{"roofline": true, "fft": true}

// Source returns the complete source of a kernel family ("direct"): the
// portability header, the shared helpers and the family itself, so that a
// compiler needs no include paths.
func Source(family string) (string, error) {
	var b strings.Builder
	files := []string{"portability.h", "common.cl", family + ".cl"}
	if standalone[family] {
		files = []string{"portability.h", family + ".cl"}
	}
	for _, name := range files {
		text, err := sources.ReadFile(name)
		if err != nil {
			return "", fmt.Errorf("kernels: no kernel family %q", family)
		}
		fmt.Fprintf(&b, "// ---- %s\n", name)
		b.Write(text)
	}
	return b.String(), nil
}

// A Launch is one specialised kernel, ready for a backend to compile and
// run: the Source compiled with Defines, called Name, over a grid of
// Groups work-groups of Local work-items each (x fastest).
type Launch struct {
	Family  string
	Name    string
	Defines []string // "-DNAME=value" style pairs without the -D: "KX=7"
	Local   [3]int
	Groups  [3]int
	// Wide is true when ACC_T is double (the taps and cval are float64
	// values; float32 otherwise).
	Wide bool
	// Taps are the weights for the taps argument, in ACC_T.
	Taps []float64
	// Outer is the int argument describing the outer axes (never empty, so
	// that a backend can always allocate it).
	Outer []int32
	// Scalars are the long arguments after the buffers, in order.
	Scalars []int64
	// CVal is the ACC_T argument after them.
	CVal float64
	// LocalBytes is the static local memory the kernel declares.
	LocalBytes int
	// TapsInParams: the kernel takes its weights by value among its
	// parameters (a struct of len(Taps) ACC_T values) instead of as a
	// __constant pointer; only CUDA launches are built so.
	TapsInParams bool
	// Shape is tiled.cl's work decomposition, FusedShape sepfused.cl's,
	// RowsShape rows.cl's, Sep3Shape sep3.cl's, SepTileShape septile.cl's
	// (zero for other families).
	Shape        TiledShape
	FusedShape   SepFusedShape
	RowsShape    RowsShape
	Sep3Shape    Sep3Shape
	SepTileShape SepTileShape
}

// Tuning is what a tuner may fix of a problem's implementation: tiled.cl's
// or rows.cl's work decomposition for the direct method, sepfused.cl's,
// septile.cl's or sep3.cl's for the separable one. The zero value lets the
// builders choose.
type Tuning struct {
	Tiled   TiledShape    `json:"tiled,omitzero"`
	Fused   SepFusedShape `json:"fused,omitzero"`
	Rows    RowsShape     `json:"rows,omitzero"`
	Sep3    Sep3Shape     `json:"sep3,omitzero"`
	SepTile SepTileShape  `json:"septile,omitzero"`
	FFT     FFTShape      `json:"fft,omitzero"`
}

// String names the decomposition t fixes ("tiled.cl 32x4 threads, …"), or
// says that it fixes none.
func (t Tuning) String() string {
	switch {
	case t.Tiled != (TiledShape{}):
		return "tiled.cl " + t.Tiled.String()
	case t.Rows != (RowsShape{}):
		return "rows.cl " + t.Rows.String()
	case t.Fused != (SepFusedShape{}):
		return fmt.Sprintf("sepfused.cl %+v", t.Fused)
	case t.Sep3 != (Sep3Shape{}):
		return fmt.Sprintf("sep3.cl %v", t.Sep3)
	case t.SepTile != (SepTileShape{}):
		return fmt.Sprintf("septile.cl %v", t.SepTile)
	case t.FFT != (FFTShape{}):
		return fmt.Sprintf("FFT lengths %v", t.FFT.Lengths)
	}
	return "the kernels' own"
}

// FFTShape fixes the FFT method's transform lengths, one per transformed
// axis (at most 4; zero leaves the choice to internal/fftconv's cost
// model), as FFTW's wisdom fixes a plan.
type FFTShape struct {
	Lengths [4]int
}

// Slice is the forced lengths, or nil where none are.
func (s FFTShape) Slice() []int {
	n := 0
	for n < len(s.Lengths) && s.Lengths[n] > 0 {
		n++
	}
	if n == 0 {
		return nil
	}
	return s.Lengths[:n:n]
}

// Describe names the launch's implementation for reports: its family and,
// for tiled.cl, its work decomposition ("tiled 32x8 threads, 4x4 outputs
// each").
func (l *Launch) Describe() string {
	switch {
	case l.Shape != (TiledShape{}):
		return l.Family + " " + l.Shape.String()
	case l.RowsShape != (RowsShape{}):
		return l.Family + " " + l.RowsShape.String()
	case l.Sep3Shape != (Sep3Shape{}):
		return l.Family + " " + l.Sep3Shape.String()
	case l.SepTileShape != (SepTileShape{}):
		return l.Family + " " + l.SepTileShape.String()
	case l.FusedShape != (SepFusedShape{}):
		d := fmt.Sprintf("%s %d threads, %d outputs each, %d rows", l.Family, l.FusedShape.TX, l.FusedShape.RX, l.FusedShape.SEG)
		if l.FusedShape.Prefetch {
			d += ", prefetching"
		}
		return d
	}
	return l.Family
}

// Describe names the implementations of a list of steps, once each in
// order ("sepfused …, separable").
func Describe(steps []Step) string {
	var names []string
	for _, s := range steps {
		if d := s.Launch.Describe(); !slices.Contains(names, d) {
			names = append(names, d)
		}
	}
	return strings.Join(names, ", ")
}

// typeName is the OpenCL C name of each dtype ("" for float16, which
// needs cl_khr_fp16: the GPU kernels do not take it).
func typeName(d nd.DType) string {
	switch d {
	case nd.Uint8:
		return "uchar"
	case nd.Int8:
		return "char"
	case nd.Uint16:
		return "ushort"
	case nd.Int16:
		return "short"
	case nd.Uint32:
		return "uint"
	case nd.Int32:
		return "int"
	case nd.Uint64:
		return "ulong"
	case nd.Int64:
		return "long"
	case nd.Float32:
		return "float"
	case nd.Float64:
		return "double"
	}
	return ""
}

// CheckDTypes reports whether the GPU kernels take p's input and output
// types: every type but float16, which the CPU engine runs.
func CheckDTypes(p *nd.Problem) error {
	for _, d := range []nd.DType{p.In, p.Out} {
		if typeName(d) == "" {
			return &nd.UnsupportedError{What: "dtype on a GPU", Value: d.String(), Supported: "every dtype but float16; use --device cpu"}
		}
	}
	return nil
}

// AccBytes is the size of p's accumulation type (ACC_T, see typeDefines):
// 8 where it is double (p.Wide), else 4. Local memory, the taps argument
// and the separable method's temporaries are counted in it.
func AccBytes(p *nd.Problem) int {
	if p.Wide {
		return 8
	}
	return 4
}

// typeDefines are the defines of the element and accumulation types.
func typeDefines(p *nd.Problem) []string {
	acc := "float"
	defs := []string{"IN_T=" + typeName(p.In), "OUT_T=" + typeName(p.Out)}
	if p.Wide {
		acc = "double"
		defs = append(defs, "ACC_DOUBLE=1")
	}
	defs = append(defs, "ACC_T="+acc)
	// Integers of at most 16 bits convert to and from a float accumulator
	// through a float's bits (common.cl's to_acc, to_output).
	small := func(d nd.DType) int { return b2i(!p.Wide && d.IsInteger() && d.Size() <= 2) }
	defs = append(defs, fmt.Sprintf("IN_SMALL_INT=%d", small(p.In)), fmt.Sprintf("OUT_SMALL_INT=%d", small(p.Out)))
	if p.Out.IsInteger() {
		// The minimum written as an expression: the literals 2147483648
		// and 9223372036854775808 fit no signed type; the maximum as an
		// unsigned long literal, which holds every type's.
		lo, hi := p.Out.IntegerRange()
		defs = append(defs, "OUT_INTEGER=1", fmt.Sprintf("OUT_MIN=(%dL-1)", lo+1), fmt.Sprintf("OUT_MAX=%dUL", hi))
	} else {
		defs = append(defs, "OUT_INTEGER=0")
	}
	slices.Sort(defs)
	return defs
}
