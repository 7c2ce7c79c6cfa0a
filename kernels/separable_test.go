package kernels

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/nd"
)

// emulateSeparable runs a Separable's steps on the CPU as separable.cl
// does, element by element in the accumulator type F, one fused
// multiply-add per tap, and returns the output stored in the problem's
// dtype.
func emulateSeparable[F nd.Float](t *testing.T, s *Separable, p *nd.Problem, in []float64) nd.Array {
	out := make([]F, len(p.Kernels)*product(p.OutShape))
	temps := [2][]F{make([]F, s.TempElems), make([]F, s.TempElems)}
	input := make([]F, len(in))
	for i, v := range in {
		input[i] = F(v)
	}
	buffer := func(r Role) []F {
		switch r {
		case Input:
			return input
		case Output:
			return out
		}
		return temps[r-Temp0]
	}
	for _, step := range s.Steps {
		l := step.Launch
		def := map[string]int{}
		for _, d := range l.Defines {
			name, value, _ := strings.Cut(d, "=")
			def[name], _ = strconv.Atoi(value)
		}
		k, shift := def["K"], def["SHIFT"]
		nIn, nOut, inner, total, stride, offset := int(l.Scalars[0]), int(l.Scalars[1]), int(l.Scalars[2]), int(l.Scalars[3]), int(l.Scalars[4]), int(l.Scalars[5])
		if k != len(l.Taps) {
			t.Fatalf("K=%d with %d taps", k, len(l.Taps))
		}
		if l.Groups[0]*l.Local[0] <= 0 {
			t.Fatalf("an empty grid %v", l.Groups)
		}
		from, to := buffer(step.From), buffer(step.To)
		for index := range total {
			c, rest := index%inner, index/inner
			i, line := rest%nOut, rest/nOut
			var acc F
			for j, w64 := range l.Taps {
				w := F(w64)
				if w == 0 {
					continue
				}
				v := F(l.CVal)
				if q, ok := p.Border.Index(i+j-shift, nIn); ok {
					v = from[(line*nIn+q)*inner+c]
				}
				acc = nd.FMA(w, v, acc)
			}
			to[index*stride+offset] = acc
		}
		// An intermediate pass stores ACC_T as it is; only the last pass
		// rounds, when the whole output is stored below.
	}
	return outputArray(p, out)
}

// TestSeparableSteps emulates every separable case of the engines' table
// and the random cases through NewSeparable's steps, compares with the
// float64 reference, and with the CPU engine's separable method bit for bit.
func TestSeparableSteps(t *testing.T) {
	ran := 0
	for _, c := range engineCases() {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if !p.Separable() {
			continue
		}
		s, err := NewSeparable(p)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if s == nil {
			continue
		}
		ran++
		var got nd.Array
		if p.Wide {
			got = emulateSeparable[float64](t, s, p, c.Input.Float64s())
		} else {
			got = emulateSeparable[float32](t, s, p, c.Input.Float64s())
		}
		engine, err := cpu.NewSeparable(p, cpu.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		checkAgainstEngines(t, c, p, got, engine, s.Steps[0].Launch.Defines)
	}
	if ran < 50 {
		t.Errorf("only %d separable cases", ran)
	}
}
