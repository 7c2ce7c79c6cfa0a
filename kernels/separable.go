package kernels

import (
	"fmt"
	"slices"

	"github.com/ndconv/ndconv/nd"
)

// Role names a buffer a separable step reads or writes: the problem's
// input or output, or one of two ACC_T temporaries.
type Role uint8

const (
	Input Role = iota
	Output
	Temp0
	Temp1
)

// A Step is one launch of separable.cl and the buffers it reads and writes.
type Step struct {
	Launch   *Launch
	From, To Role
}

// Separable is a separable correlation as launches: for each kernel of the
// bank, one pass per kernel axis from the last axis to the first, each
// reading the previous pass's temporary — the CPU engine's passes in the
// CPU engine's order, so that both give the same bits.
type Separable struct {
	Steps []Step
	// TempElems is the ACC_T elements each temporary needs (0: none).
	TempElems int
	// Temps is how many temporaries the steps use (0, 1 or 2).
	Temps int
}

// passLocal is the work-group size of a pass, and passMaxGroups bounds its
// grid (the kernel strides over the rest).
const (
	passLocal     = 256
	passMaxGroups = 1 << 16
)

// NewSeparable specialises separable.cl for p, whose kernels must all have
// factors. It returns nil, nil when the output is empty.
func NewSeparable(p *nd.Problem) (*Separable, error) {
	if err := CheckDTypes(p); err != nil {
		return nil, err
	}
	if !p.Separable() {
		return nil, fmt.Errorf("kernels: separable: a kernel is not separable")
	}
	if slices.Contains(p.OutShape, 0) || slices.Contains(p.InShape, 0) {
		return nil, nil
	}
	rank := len(p.InShape)
	var passes []int
	for d := rank - 1; d >= 0; d-- {
		if p.KShape[d] > 1 {
			passes = append(passes, d)
		}
	}
	if len(passes) == 0 {
		passes = []int{0} // a one-tap kernel is a scaling; its factor sits on axis 0
	}
	s := &Separable{Temps: min(len(passes)-1, 2)}
	shape := slices.Clone(p.InShape)
	shapes := [][]int{slices.Clone(shape)}
	for i, d := range passes {
		shape[d] = p.OutShape[d]
		shapes = append(shapes, slices.Clone(shape))
		if i < len(passes)-1 {
			s.TempElems = max(s.TempElems, product(shape))
		}
	}
	acc := nd.Float32
	if p.Wide {
		acc = nd.Float64
	}
	bank := len(p.Kernels)
	for b, k := range p.Kernels {
		cval := p.CVal
		from := Input
		for i, d := range passes {
			in, out := shapes[i], shapes[i+1]
			f := k.Factors[d]
			q := *p // the pass's types: ACC_T temporaries between passes
			to, stride, offset := Output, 1, 0
			if i > 0 {
				q.In = acc
			}
			if i < len(passes)-1 {
				q.Out = acc
				to = Temp0 + Role(i%2)
			} else {
				stride, offset = bank, b
			}
			total := product(out)
			l := &Launch{Family: "separable", Name: "correlate_pass", Wide: p.Wide, CVal: cval,
				Taps: slices.Clone(f), Outer: []int32{0},
				Local:  [3]int{passLocal, 1, 1},
				Groups: [3]int{max(1, min((total+passLocal-1)/passLocal, passMaxGroups)), 1, 1},
				Scalars: []int64{int64(in[d]), int64(out[d]), int64(product(in[d+1:])), int64(total),
					int64(stride), int64(offset)},
			}
			l.Defines = append(typeDefines(&q),
				fmt.Sprintf("BORDER=%d", p.Border),
				fmt.Sprintf("K=%d", len(f)),
				fmt.Sprintf("SHIFT=%d", p.Shift[d]))
			slices.Sort(l.Defines)
			s.Steps = append(s.Steps, Step{Launch: l, From: from, To: to})
			from = to
			// Outside an intermediate the direct definition sees cval
			// times the factors already applied.
			sum := 0.0
			for _, v := range f {
				sum += v
			}
			cval *= sum
		}
	}
	return s, nil
}

func product(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}
