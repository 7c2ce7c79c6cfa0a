package kernels

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/winograd"
	"github.com/ndconv/ndconv/nd"
)

func winogradSpec(shape []int, in nd.DType, k []int, bank int, border nd.Border) nd.Spec {
	n := 1
	for _, s := range k {
		n *= s
	}
	var ks []nd.Kernel
	for range bank {
		w := make([]float64, n)
		for i := range w {
			w[i] = float64(i%5) - 1.5
		}
		ks = append(ks, nd.Kernel{Shape: k, Weights: w})
	}
	return nd.Spec{Shape: shape, In: in, Kernels: ks, Border: border}
}

// TestWinogradCUDASyntax: winograd.cl, as portability.h maps it onto
// CUDA, is valid C++ for each tile (g++ -fsyntax-only, as TestCUDASyntax
// checks the other families); skipped without g++ unless
// NDCONV_REQUIRE_GXX=1.
func TestWinogradCUDASyntax(t *testing.T) {
	check := cudaSyntaxChecker(t)
	for _, c := range []struct {
		spec  nd.Spec
		m     int
		stage int
	}{
		{winogradSpec([]int{64, 64}, nd.Float32, []int{3, 3}, 1, nd.Reflect), 4, 0},
		{winogradSpec([]int{64, 64, 3}, nd.Uint8, []int{3, 3}, 8, nd.Constant), 2, -1},
		{winogradSpec([]int{64, 64}, nd.Uint16, []int{5, 5}, 4, nd.Mirror), 2, 0},
		{winogradSpec([]int{64, 64}, nd.Float32, []int{5, 5}, 2, nd.Wrap), 4, -1},
		{winogradSpec([]int{16, 16, 16}, nd.Uint8, []int{3, 3, 3}, 16, nd.Nearest), 2, 0},
	} {
		p, err := c.spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		l, err := NewWinograd(p, WinogradOptions{Tile: c.m, Stage: c.stage})
		if err != nil {
			t.Fatal(err)
		}
		if out, err := check(l, ""); err != nil {
			t.Errorf("%s: g++: %v\n%s", l.Describe(), err, out)
		}
	}
}

// TestWinogradLaunch: the launch's taps hold the bank's transformed
// weights; one work-item per tile and gap position; refused,
// with the reason, for what winograd.cl does not take.
func TestWinogradLaunch(t *testing.T) {
	s := winogradSpec([]int{10, 7, 3, 9}, nd.Float32, []int{3, 3}, 5, nd.Reflect)
	s.Axes = []int{1, 3}
	p, err := s.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewWinograd(p, WinogradOptions{Tile: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Taps) != 5*36 {
		t.Errorf("%d taps", len(l.Taps))
	}
	// Gaps 10, 3, 1; tiles ⌈7/4⌉·⌈9/4⌉.
	if want := []int64{10, 3, 1, 1, 7, 9, 1, 7, 9, 1, 10 * 3 * 2 * 3}; fmt.Sprint(l.Scalars) != fmt.Sprint(want) {
		t.Errorf("scalars %v, want %v", l.Scalars, want)
	}
	if d := l.Describe(); !strings.Contains(d, "F(4×4,3×3)") || !strings.Contains(d, "staged 5 filters") || l.LocalBytes != 64*16*5*4 {
		t.Errorf("describe %q, %d local bytes", d, l.LocalBytes)
	}
	if l, _ := NewWinograd(p, WinogradOptions{Tile: 4, Stage: -1}); l.LocalBytes != 0 || strings.Contains(l.Describe(), "staged") {
		t.Errorf("describe %q", l.Describe())
	}
	for _, c := range []struct {
		spec nd.Spec
		why  string
	}{
		{winogradSpec([]int{64, 64}, nd.Float32, []int{7, 7}, 1, nd.Reflect), "not 7×7"},
		{winogradSpec([]int{64, 64}, nd.Float16, []int{3, 3}, 1, nd.Reflect), "float16"},
		{winogradSpec([]int{16, 16, 16}, nd.Float32, []int{3, 3, 3}, 300, nd.Reflect), "64 KiB of constant memory"},
	} {
		p, err := c.spec.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewWinograd(p, WinogradOptions{}); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%v: %v, want %q", c.spec.Kernels[0].Shape, err, c.why)
		}
	}
}

// TestWinogradTables: the Bᵀ and Aᵀ tables winograd.cl holds for each tile
// are internal/winograd's (the transformed weights, made there, must meet
// the same matrices).
func TestWinogradTables(t *testing.T) {
	src, err := sources.ReadFile("winograd.cl")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	seen := 0
	for _, mr := range [][2]int{{2, 3}, {4, 3}, {2, 5}, {4, 5}} {
		tr, err := winograd.NewTransform(mr[0], mr[1])
		if err != nil {
			t.Fatal(err)
		}
		cond := fmt.Sprintf("M == %d && R == %d\n", mr[0], mr[1])
		i := strings.Index(text, cond)
		if i < 0 {
			t.Errorf("winograd.cl has no tables for F(%d,%d)", mr[0], mr[1])
			continue
		}
		block := text[i+len(cond):]
		for _, tab := range []struct {
			name string
			m    [][]float64
		}{{"WG_BT_TABLE", tr.BT}, {"WG_AT_TABLE", tr.AT}} {
			j := strings.Index(block, "#define "+tab.name+" {")
			if j < 0 {
				t.Fatalf("F(%d,%d): no %s", mr[0], mr[1], tab.name)
			}
			line := block[j+len("#define "+tab.name+" {"):]
			line = line[:strings.Index(line, "}")]
			var got []float64
			for _, f := range strings.Split(line, ",") {
				v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, v)
			}
			var want []float64
			for _, r := range tab.m {
				want = append(want, r...)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("F(%d,%d) %s: %v, want %v", mr[0], mr[1], tab.name, got, want)
			}
		}
		seen++
	}
	if want := 4; seen != want {
		t.Errorf("%d tiles' tables checked, want %d", seen, want)
	}
}
