package kernels

import (
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

//go:embed portability.h *.cl
var sources embed.FS

// standalone families need none of common.cl's helpers (nor its defines).
var standalone = map[string]bool{"roofline": true, "fft": true, "layout": true}

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
	// Shape is the launch's work decomposition, its family's: a
	// TiledShape for tiled.cl, RowsShape for rows.cl, BankShape for
	// bank.cl, SepFusedShape for sepfused.cl and sepring.cl, Sep3Shape
	// for sep3.cl, SepTileShape for septile.cl; nil for the families
	// that have none (direct.cl, separable.cl).
	Shape Decomposition
}

// A Decomposition is how a launch spreads its work: one family's shape
// (see Launch.Shape). The set is closed: the families of this package.
type Decomposition interface {
	// describe names the decomposition for reports (Launch.Describe).
	describe() string
}

func (s TiledShape) describe() string   { return s.String() }
func (s RowsShape) describe() string    { return s.String() }
func (s BankShape) describe() string    { return s.String() }
func (s Sep3Shape) describe() string    { return s.String() }
func (s SepTileShape) describe() string { return s.String() }
func (s FFTShape) describe() string     { return fmt.Sprintf("lengths %v", s.Slice()) }
func (s SepFusedShape) describe() string {
	d := fmt.Sprintf("%d threads, %d outputs each, %d rows", s.TX, s.RX, s.SEG)
	if s.Prefetch {
		d += ", prefetching"
	}
	return d
}

// Tuning is what a tuner may fix of a problem's implementation: one
// family's work decomposition — tiled.cl's or rows.cl's for the direct
// method, sepfused.cl's, septile.cl's or sep3.cl's for the separable one,
// the transform lengths for the FFT. The zero value lets the builders
// choose; a builder ignores a shape of another method's family.
type Tuning struct {
	// Shape is the decomposition: a TiledShape, RowsShape, BankShape,
	// SepFusedShape, Sep3Shape, SepTileShape or FFTShape; nil for none.
	Shape Decomposition
	// FuseSmall runs the separable method's fused strips (sepfused.cl,
	// sep3.cl) on small problems too (SeparableOptions.FuseSmall): the
	// backends' tests, whose problems are all small, set it to run those
	// kernels. No tuner chooses it, and no cache holds it.
	FuseSmall bool
}

// tuningKeys name each family's shape in a tuning's JSON form, the
// tuning cache's entries: one key per entry, as the cache files written
// before Tuning held one shape have them.
var tuningKeys = []struct {
	key   string
	parse func([]byte) (Decomposition, error)
}{
	{"tiled", parseShape[TiledShape]},
	{"fused", parseShape[SepFusedShape]},
	{"rows", parseShape[RowsShape]},
	{"bank", parseShape[BankShape]},
	{"sep3", parseShape[Sep3Shape]},
	{"septile", parseShape[SepTileShape]},
	{"fft", parseShape[FFTShape]},
}

func parseShape[S Decomposition](b []byte) (Decomposition, error) {
	var s S
	err := json.Unmarshal(b, &s)
	return s, err
}

// key names t's shape in the JSON form ("" for none).
func (t Tuning) key() string {
	switch t.Shape.(type) {
	case TiledShape:
		return "tiled"
	case SepFusedShape:
		return "fused"
	case RowsShape:
		return "rows"
	case BankShape:
		return "bank"
	case Sep3Shape:
		return "sep3"
	case SepTileShape:
		return "septile"
	case FFTShape:
		return "fft"
	}
	return ""
}

// MarshalJSON writes {"tiled": {…}} (the shape under its family's key),
// or {} for no shape. FuseSmall is not written.
func (t Tuning) MarshalJSON() ([]byte, error) {
	if t.Shape == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(map[string]Decomposition{t.key(): t.Shape})
}

// UnmarshalJSON reads MarshalJSON's form. Keys it does not know are
// ignored (a later version's families); two known keys are an error.
func (t *Tuning) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*t = Tuning{}
	for _, k := range tuningKeys {
		raw, ok := m[k.key]
		if !ok {
			continue
		}
		if t.Shape != nil {
			return fmt.Errorf("kernels: a tuning with two shapes (%s and %s)", t.key(), k.key)
		}
		s, err := k.parse(raw)
		if err != nil {
			return fmt.Errorf("kernels: tuning %s: %w", k.key, err)
		}
		t.Shape = s
	}
	return nil
}

// FFTLengths is the transform lengths t forces (an FFTShape's), or nil.
func (t Tuning) FFTLengths() []int {
	s, _ := t.Shape.(FFTShape)
	return s.Slice()
}

// String names the decomposition t fixes ("tiled.cl 32x4 threads, …"), or
// says that it fixes none.
func (t Tuning) String() string {
	switch s := t.Shape.(type) {
	case nil:
		return "the kernels' own"
	case SepFusedShape:
		return fmt.Sprintf("sepfused.cl %+v", s)
	case FFTShape:
		return fmt.Sprintf("FFT lengths %v", s.Lengths)
	}
	return t.key() + ".cl " + fmt.Sprint(t.Shape)
}

// Describe names the launch's implementation for reports: its family and
// its work decomposition where it has one ("tiled 32x8 threads, 4x4
// outputs each").
func (l *Launch) Describe() string {
	if l.Shape == nil {
		return l.Family
	}
	return l.Family + " " + l.Shape.describe()
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

func sum(f []float64) float64 {
	t := 0.0
	for _, v := range f {
		t += v
	}
	return t
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func product(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tapsInParams decides whether the launch's weights go by value among its
// parameters (TapsInParams): where the backend takes that many bytes there
// (maxBytes, 0 for none). It returns the define that tells the kernel.
func (l *Launch) tapsInParams(maxBytes, accSize int) string {
	l.TapsInParams = maxBytes > 0 && len(l.Taps)*accSize <= maxBytes
	return fmt.Sprintf("TAPS_IN_PARAMS=%d", b2i(l.TapsInParams))
}

// nonzeroDefines tell tiled.cl which weights are nonzero when that is
// cheap to specialise on: ALL_NONZERO=1 for a dense kernel (the usual
// case), a bitmap NZ0…NZ3 for up to 256 weights with zeros among them, and
// nothing otherwise (the kernel then tests each weight as it runs).
func nonzeroDefines(taps []float64) []string {
	zeros := 0
	for _, w := range taps {
		if w == 0 {
			zeros++
		}
	}
	if zeros == 0 {
		return []string{"ALL_NONZERO=1"}
	}
	if len(taps) > 256 {
		return []string{"ALL_NONZERO=0"}
	}
	var words [4]uint64
	for i, w := range taps {
		if w != 0 {
			words[i/64] |= 1 << (i % 64)
		}
	}
	defs := []string{"ALL_NONZERO=0"}
	for i, w := range words {
		defs = append(defs, fmt.Sprintf("NZ%d=0x%xUL", i, w))
	}
	return defs
}

// vectorDefines are VECTOR_LOADS (and IN_T4) where the input's rows
// allow 4-vector loads (loads) and its dtype has a 4-vector type, and
// VECTOR_STORES (and OUT_T4) the same of the output (stores).
func vectorDefines(p *nd.Problem, loads, stores bool) []string {
	var defs []string
	if vec, ok := vector4(p.In); ok && loads {
		defs = append(defs, "VECTOR_LOADS=1", "IN_T4="+vec)
	} else {
		defs = append(defs, "VECTOR_LOADS=0")
	}
	if vec, ok := vector4(p.Out); ok && stores {
		defs = append(defs, "VECTOR_STORES=1", "OUT_T4="+vec)
	} else {
		defs = append(defs, "VECTOR_STORES=0")
	}
	return defs
}

// vector4 is the 4-vector type of a dtype loaded or stored 4 at a time.
func vector4(d nd.DType) (string, bool) {
	switch d {
	case nd.Uint8, nd.Uint16, nd.Int16, nd.Int32, nd.Float32:
		return typeName(d) + "4", true
	}
	return "", false
}

// TuningCandidates are the work decompositions `ndconv tune` measures for
// p: tiled.cl's, rows.cl's and bank.cl's for the direct method; for the
// separable one sep3.cl's where its passes are Z, Y, X on adjacent axes,
// and septile.cl's, sepfused.cl's and sepring.cl's (none where the passes
// do not fuse). Every candidate computes the same bits; they differ only
// in how the work is spread.
func TuningCandidates(p *nd.Problem, separable bool) []Tuning {
	if separable {
		if !fusable(separablePasses(p)) {
			return nil
		}
		return slices.Concat(sep3Candidates(p), sepTileCandidates(p), sepFusedCandidates(p))
	}
	return slices.Concat(rowsCandidates(p), bankCandidates(p), tiledCandidates(p))
}
