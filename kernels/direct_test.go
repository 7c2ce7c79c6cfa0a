package kernels

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/cpu"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// emulateDirect runs a direct Launch on the CPU, work-group by work-group,
// as direct.cl does (staged tile or global reads, per its TILED define),
// in the accumulator type F with one fused multiply-add per tap.
// It checks the canonical form NewDirect builds — axis folding, tap order,
// shifts, work sizes — without a GPU; the kernels themselves run against
// the same case table on the device, in the backends' tests.
func emulateDirect[F nd.Float](t *testing.T, l *Launch, p *nd.Problem, in []float64) []F {
	def := map[string]int{}
	for _, d := range l.Defines {
		name, value, _ := strings.Cut(d, "=")
		if n, err := strconv.Atoi(value); err == nil {
			def[name] = n
		}
	}
	bank, ky, kx, sy, sx, c := def["BANK"], def["KY"], def["KX"], def["SHIFT_Y"], def["SHIFT_X"], def["C"]
	// Bank groups: BANK kernels per work-group of OUT_BANK, the weights
	// group by group.
	outBank := bank
	if n, ok := def["OUT_BANK"]; ok {
		outBank = n
	}
	groups := outBank / bank
	if groups*bank != outBank || len(l.Taps)%outBank != 0 {
		t.Fatalf("bank groups: BANK=%d, OUT_BANK=%d, %d weights", bank, outBank, len(l.Taps))
	}
	tileX, tileY, nOuter, outerTaps := def["TILE_X"], def["TILE_Y"], def["NOUTER"], def["OUTER_TAPS"]
	switch l.Family {
	case "tiled":
		tileX, tileY = def["TX"]*def["RX"], def["TY"]*def["RY"]
		if l.Local != [3]int{def["TX"], def["TY"], 1} {
			t.Fatalf("tiled launch: local size %v, defines TX=%d TY=%d", l.Local, def["TX"], def["TY"])
		}
	case "bank":
		// Work-groups of KL·NCOL work-items over TILE_Y × TILE_X tiles,
		// KPL kernels each.
		if l.Local != [3]int{def["KL"] * def["NCOL"], 1, 1} || def["KL"]*def["KPL"] != bank {
			t.Fatalf("bank launch: local size %v, defines %v", l.Local, l.Defines)
		}
	case "rows":
		// Work-items of RX outputs walking chunks of rows, the chunk
		// length after the outer axes.
		tileX, tileY = def["TX"]*def["RX"], int(l.Outer[4*nOuter])
		if l.Local != [3]int{def["TX"], 1, 1} || len(l.Outer) != 4*nOuter+1 {
			t.Fatalf("rows launch: local size %v, defines TX=%d, outer %v", l.Local, def["TX"], l.Outer)
		}
	}
	inY, inX, outY, outX, planes := int(l.Scalars[0]), int(l.Scalars[1]), int(l.Scalars[2]), int(l.Scalars[3]), int(l.Scalars[4])
	inRow, outRow := inX*c, outX*c
	inPlane, outPlane := inY*inRow, outY*outRow
	out := make([]F, planes*outPlane*outBank)
	constant := p.Border == nd.Constant
	mapped := func(q, n int) (int, bool) {
		if constant {
			return q, q >= 0 && q < n
		}
		m, _ := p.Border.Index(q, n)
		return m, true
	}
	load := func(src, py, pe int) F {
		px := int(math.Floor(float64(pe) / float64(c)))
		ch := pe - px*c
		y, okY := mapped(py, inY)
		x, okX := mapped(px, inX)
		if src < 0 || !okY || !okX {
			return F(l.CVal)
		}
		return F(in[src*inPlane+y*inRow+x*c+ch])
	}
	if l.Name == "correlate_rolling" {
		// Chunks of Outer[4] output planes along the one outer axis; the
		// walk itself runs on the devices (PoCL in CI).
		chunk := int(l.Outer[4])
		if nOuter != 1 || len(l.Outer) != 5 || def["KZ"] != int(l.Outer[2]) || def["ROLL_Z"] != 1 || l.Groups[2]*chunk < int(l.Outer[1]) || (l.Groups[2]-1)*chunk >= int(l.Outer[1]) {
			t.Fatalf("rolling launch: groups %v, defines %v, outer %v", l.Groups, l.Defines, l.Outer)
		}
	}
	if (l.Name != "correlate_rolling" && l.Groups[2] > planes*groups) || l.Groups[0]*tileX < outRow || l.Groups[1]*tileY < outY {
		t.Fatalf("groups %v do not cover %d planes of %d×%d", l.Groups, planes, outY, outRow)
	}
	for zg := 0; zg < planes*groups; zg++ {
		plane, group := zg/groups, zg%groups
		for gy := 0; gy < l.Groups[1]; gy++ {
			for gx := 0; gx < l.Groups[0]; gx++ {
				e0, y0 := gx*tileX, gy*tileY
				acc := make([]F, tileY*tileX*bank)
				for tap := 0; tap < outerTaps; tap++ {
					src, rest, tt, stride := 0, plane, tap, 1
					for d := nOuter - 1; d >= 0; d-- {
						nIn, nOut, k, shift := int(l.Outer[4*d]), int(l.Outer[4*d+1]), int(l.Outer[4*d+2]), int(l.Outer[4*d+3])
						q := rest%nOut + tt%k - shift
						rest, tt = rest/nOut, tt/k
						if src >= 0 {
							if m, ok := mapped(q, nIn); ok {
								src += m * stride
							} else {
								src = -1
							}
						}
						stride *= nIn
					}
					w := l.Taps[(group*outerTaps+tap)*ky*kx*bank:]
					for ly := range tileY {
						for lx := range tileX {
							for jy := range ky {
								for jx := range kx {
									v := load(src, y0+ly+jy-sy, e0+lx+(jx-sx)*c)
									for k := range bank {
										if wk := F(w[(jy*kx+jx)*bank+k]); wk != 0 {
											acc[(ly*tileX+lx)*bank+k] = nd.FMA(wk, v, acc[(ly*tileX+lx)*bank+k])
										}
									}
								}
							}
						}
					}
				}
				for ly := range tileY {
					for lx := range tileX {
						e, y := e0+lx, y0+ly
						if e < outRow && y < outY {
							copy(out[(plane*outPlane+y*outRow+e)*outBank+group*bank:][:bank], acc[(ly*tileX+lx)*bank:][:bank])
						}
					}
				}
			}
		}
	}
	return out
}

// TestDirectCanonicalForm emulates every case of the engines' table and
// the random cases through NewDirect's launches — tiled.cl's and
// direct.cl's — compares with the float64 reference, and with the CPU
// engine's direct method bit for bit: the GPU adds the same products in
// the same order.
func TestDirectCanonicalForm(t *testing.T) {
	for _, untiled := range []bool{false, true} {
		testDirectCanonicalForm(t, DirectOptions{MaxLocalBytes: 32 << 10, Untiled: untiled})
	}
}

func testDirectCanonicalForm(t *testing.T, opt DirectOptions) {
	for _, c := range engineCases() {
		p, err := c.Spec.Normalize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		l, err := NewDirect(p, opt)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if l == nil {
			if len(c.Want().Values) != 0 {
				t.Errorf("%s: no launch for a non-empty output", c.Name)
			}
			continue
		}
		checkDirectLaunch(t, c, p, l)
	}
}

// checkDirectLaunch emulates a direct launch in the problem's accumulator
// type and checks it against the reference and the CPU engine's bits.
func checkDirectLaunch(t *testing.T, c enginetest.Case, p *nd.Problem, l *Launch) {
	t.Helper()
	var got nd.Array
	if p.Wide {
		got = outputArray(p, emulateDirect[float64](t, l, p, c.Input.Float64s()))
	} else {
		got = outputArray(p, emulateDirect[float32](t, l, p, c.Input.Float64s()))
	}
	checkAgainstEngines(t, c, p, got, cpu.NewDirect(p, cpu.Options{Workers: 1}), l.Defines)
}

// engineCases are the engines' table and a fixed set of random cases.
func engineCases() []enginetest.Case {
	return enginetest.OnGPU(append(enginetest.Table(), enginetest.Random(11, 150)...))
}

// outputArray stores an emulation's accumulators into the problem's output
// dtype, rounding as the kernels' to_output does.
func outputArray[F nd.Float](p *nd.Problem, acc []F) nd.Array {
	out, err := nd.New(p.Out, p.FullShape()...)
	if err != nil {
		panic(err)
	}
	nd.Store(out.Data, 0, 1, acc)
	return out
}

// checkAgainstEngines compares an emulated launch's output with the
// reference and, bit for bit, with a CPU engine's.
func checkAgainstEngines(t *testing.T, c enginetest.Case, p *nd.Problem, got nd.Array, engine cpu.Executable, defines []string) {
	t.Helper()
	if msg := c.Check(got, c.Want()); msg != "" {
		t.Errorf("%s: %s (defines %v)", c.Name, msg, defines)
		return
	}
	want, err := nd.New(p.Out, p.FullShape()...)
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.Execute(t.Context(), want, c.Input); err != nil {
		t.Fatalf("%s: CPU engine: %v", c.Name, err)
	}
	g, w := got.Float64s(), want.Float64s()
	for i := range w {
		if math.Float64bits(g[i]) != math.Float64bits(w[i]) && !(math.IsNaN(g[i]) && math.IsNaN(w[i])) {
			t.Errorf("%s: value %d is %v, the CPU engine's %v (defines %v)", c.Name, i, g[i], w[i], defines)
			return
		}
	}
}

// TestCanonicalFolding pins how axes fold: channels after the kernel axes
// merge into X; many samples after them become X themselves; outer axes
// the kernel does not span merge.
func TestCanonicalFolding(t *testing.T) {
	a := func(n, k int) axis { return axis{n, n, k, k / 2} }
	for _, tc := range []struct {
		name  string
		axes  []axis
		outer int
		y, x  axis
		c     int
	}{
		{"2-D", []axis{a(10, 3), a(20, 5)}, 0, a(10, 3), a(20, 5), 1},
		{"RGB image", []axis{a(10, 3), a(20, 5), a(3, 1)}, 0, a(10, 3), a(20, 5), 3},
		{"1-D", []axis{a(30, 7)}, 0, axis{1, 1, 1, 0}, a(30, 7), 1},
		{"rows only of a wide image", []axis{a(10, 3), a(200, 1)}, 0, a(10, 3), axis{200, 200, 1, 0}, 1},
		{"3-D", []axis{a(4, 3), a(10, 3), a(20, 3)}, 1, a(10, 3), a(20, 3), 1},
		{"batch of 2-D", []axis{a(2, 1), a(3, 1), a(10, 3), a(20, 3)}, 1, a(10, 3), a(20, 3), 1},
	} {
		outer, y, x, c := canonical(tc.axes)
		if len(outer) != tc.outer || y != tc.y || x != tc.x || c != tc.c {
			t.Errorf("%s: outer %v y %v x %v c %d", tc.name, outer, y, x, c)
		}
	}
}

func TestSource(t *testing.T) {
	src, err := Source("direct")
	if err != nil || !strings.Contains(src, "correlate_direct") || !strings.Contains(src, "border_index") {
		t.Fatalf("direct source incomplete: %v", err)
	}
	if _, err := Source("nonesuch"); err == nil {
		t.Error("an unknown family has a source")
	}
}

// TestDTypesOnGPU: every dtype but float16 has an OpenCL C type and
// integer bounds the kernels can write; float16 data or output is an
// unsupported error from both families.
func TestDTypesOnGPU(t *testing.T) {
	for _, d := range nd.DTypes {
		spec := nd.Spec{Shape: []int{4, 5}, In: d, Out: nd.Float32, Kernels: []nd.Kernel{{Factors: [][]float64{{1, 2}, {1, 0, 1}}}}}
		p, err := spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		_, errDirect := NewDirect(p, DirectOptions{})
		_, errSep := NewSeparable(p, SeparableOptions{})
		if d == nd.Float16 {
			for _, err := range []error{errDirect, errSep, CheckDTypes(p)} {
				if err == nil || !strings.Contains(err.Error(), "float16") {
					t.Errorf("float16: %v, want an unsupported error", err)
				}
			}
			continue
		}
		if errDirect != nil || errSep != nil {
			t.Errorf("%v: %v, %v", d, errDirect, errSep)
		}
		if d.IsInteger() {
			p.Out = d
			defs := strings.Join(typeDefines(p), " ")
			lo, hi := d.IntegerRange()
			if !strings.Contains(defs, "OUT_T="+typeName(d)) || !strings.Contains(defs, strconv.FormatUint(hi, 10)+"UL") || !strings.Contains(defs, "OUT_MIN=("+strconv.FormatInt(lo+1, 10)+"L-1)") {
				t.Errorf("%v: defines %s", d, defs)
			}
		}
	}
}

// TestBankTapDefines: bank.cl's tap bitmaps — zero in every kernel,
// nonzero in every kernel — and the plain forms without zeros and beyond
// 256 taps.
func TestBankTapDefines(t *testing.T) {
	// Three taps of a bank of 2, tap-major: zero in both, nonzero in
	// both, zero in one.
	got := bankTapDefines([]float64{0, 0, 1, 2, 0, 3}, 2)
	want := []string{"ALL_NONZERO=0", "TAPS_KNOWN=1", "TZ0=0x1UL", "TN0=0x2UL", "TZ1=0x0UL", "TN1=0x0UL", "TZ2=0x0UL", "TN2=0x0UL", "TZ3=0x0UL", "TN3=0x0UL"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := bankTapDefines([]float64{1, 2, 3, 4}, 2); !slices.Equal(got, []string{"ALL_NONZERO=1"}) {
		t.Errorf("dense: %v", got)
	}
	if got := bankTapDefines(make([]float64, 2*257), 2); !slices.Equal(got, []string{"ALL_NONZERO=0", "TAPS_KNOWN=0"}) {
		t.Errorf("257 taps: %v", got)
	}
}
