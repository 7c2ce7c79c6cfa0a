package kernels

import (
	"slices"
	"strings"
	"testing"
)

// TestBankPlanarCUDASyntax: layout.cl as portability.h maps it onto CUDA
// compiles (g++, as TestCUDASyntax) for every element size.
func TestBankPlanarCUDASyntax(t *testing.T) {
	check := cudaSyntaxChecker(t)
	for _, size := range []int{1, 2, 4, 8} {
		l, err := BankPlanar(1000, 17, size)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := check(&Launch{Family: "layout", Name: "bank_planar", Defines: l.Defines}, ""); err != nil {
			t.Errorf("%d-byte elements: g++: %v\n%s", size, err, out)
		}
	}
}

// TestBankPlanarGrid: bank_planar's grid, emulated work-item by work-item
// as layout.cl runs it (each tile read into local memory, then written),
// moves every value of an interleaved bank into its plane exactly once,
// for banks and voxel counts around the tile's size; and sizes it cannot
// move are refused.
func TestBankPlanarGrid(t *testing.T) {
	for _, voxels := range []int64{1, 31, 32, 33, 100} {
		for _, bank := range []int{2, 5, 31, 32, 33, 70} {
			l, err := BankPlanar(voxels, bank, 4)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(l.Defines, []string{"ELEM=uint"}) || l.Local != [3]int{planarTile, planarRows, 1} {
				t.Fatalf("defines %v, local %v", l.Defines, l.Local)
			}
			in := make([]int, voxels*int64(bank))
			for i := range in {
				in[i] = i + 1
			}
			out := make([]int, len(in))
			writes := 0
			for gx := range l.Groups[0] {
				for gy := range l.Groups[1] {
					var tile [planarTile][planarTile + 1]int
					v0, k0 := int64(gx)*planarTile, gy*planarTile
					for ly := range planarRows {
						for lx := range planarTile {
							for r := ly; r < planarTile; r += planarRows {
								if v, k := v0+int64(r), k0+lx; v < voxels && k < bank {
									tile[r][lx] = in[v*int64(bank)+int64(k)]
								}
							}
						}
					}
					for ly := range planarRows {
						for lx := range planarTile {
							for r := ly; r < planarTile; r += planarRows {
								if k, v := k0+r, v0+int64(lx); v < voxels && k < bank {
									out[int64(k)*voxels+v] = tile[lx][r]
									writes++
								}
							}
						}
					}
				}
			}
			for v := range voxels {
				for k := range int64(bank) {
					if got, want := out[k*voxels+v], in[v*int64(bank)+k]; got != want {
						t.Fatalf("%d voxels × %d: out[%d·%d + %d] = %d, want %d", voxels, bank, k, voxels, v, got, want)
					}
				}
			}
			if writes != len(in) {
				t.Fatalf("%d voxels × %d: %d writes for %d values", voxels, bank, writes, len(in))
			}
		}
	}
	for _, c := range []struct {
		voxels     int64
		bank, size int
	}{{10, 3, 16}, {10, 3, 3}, {0, 3, 4}, {10, 0, 4}} {
		if _, err := BankPlanar(c.voxels, c.bank, c.size); err == nil || !strings.Contains(err.Error(), "planar") {
			t.Errorf("%+v: %v, want a refusal", c, err)
		}
	}
}
