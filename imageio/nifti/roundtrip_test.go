package nifti

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// randomArray returns an array of dt with the given shape and values over
// the type's range; floats include NaN, ±Inf and −0.
func randomArray(t testing.TB, rng *rand.Rand, dt nd.DType, shape []int) nd.Array {
	a, err := nd.New(dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)}
	switch d := a.Data.(type) {
	case []uint8:
		for i := range d {
			d[i] = uint8(rng.Uint32())
		}
	case []uint16:
		for i := range d {
			d[i] = uint16(rng.Uint32())
		}
	case []int8:
		for i := range d {
			d[i] = int8(rng.Uint32())
		}
	case []uint32:
		for i := range d {
			d[i] = rng.Uint32()
		}
	case []uint64:
		for i := range d {
			d[i] = rng.Uint64()
		}
	case []int64:
		for i := range d {
			d[i] = int64(rng.Uint64())
		}
	case []int16:
		for i := range d {
			d[i] = int16(rng.Uint32())
		}
	case []int32:
		for i := range d {
			d[i] = int32(rng.Uint32())
		}
	case []float32:
		for i := range d {
			d[i] = float32(rng.NormFloat64() * 1e3)
			if rng.IntN(8) == 0 {
				d[i] = float32(specials[rng.IntN(len(specials))])
			}
		}
	case []float64:
		for i := range d {
			d[i] = rng.NormFloat64() * 1e30
			if rng.IntN(8) == 0 {
				d[i] = specials[rng.IntN(len(specials))]
			}
		}
	}
	return a
}

// randomHeader returns a header with every geometry field set at random.
func randomHeader(rng *rand.Rand) *Header {
	h := NewHeader()
	f := func() float32 { return float32(rng.NormFloat64() * 10) }
	h.DimInfo = uint8(rng.IntN(64))
	h.IntentP = [3]float32{f(), f(), f()}
	h.IntentCode = int16(rng.IntN(30))
	h.SliceStart, h.SliceEnd, h.SliceCode = int16(rng.IntN(3)), int16(rng.IntN(9)), uint8(rng.IntN(7))
	for i := range h.Pixdim {
		h.Pixdim[i] = float32(0.1 + rng.Float64()*3)
	}
	h.Pixdim[0] = []float32{1, -1}[rng.IntN(2)]
	h.XYZTUnits = uint8(rng.IntN(64))
	h.SliceDuration, h.TOffset = f(), f()
	h.Descrip = "random header " + string(rune('a'+rng.IntN(26)))
	h.AuxFile = "aux"
	h.IntentName = "sixteen bytes ok"
	h.QformCode, h.SformCode = int16(rng.IntN(5)), int16(rng.IntN(5))
	b, c, d := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
	n := math.Sqrt(1+b*b+c*c+d*d) * (1 + rng.Float64())
	h.QuaternB, h.QuaternC, h.QuaternD = float32(b/n), float32(c/n), float32(d/n)
	h.QOffset = [3]float32{f(), f(), f()}
	for r := range h.SRow {
		for c := range h.SRow[r] {
			h.SRow[r][c] = f()
		}
	}
	return h
}

// sameGeometry reports whether the fields that Write keeps from a header
// are equal.
func sameGeometry(a, b *Header) bool {
	keep := func(h *Header) Header {
		c := *h
		c.Raw, c.BigEndian = [HeaderSize]byte{}, false
		c.Dim, c.Datatype, c.Bitpix, c.VoxOffset = [8]int16{}, 0, 0, 0
		c.SclSlope, c.SclInter, c.CalMin, c.CalMax = 0, 0, 0, 0
		return c
	}
	return keep(a) == keep(b)
}

// TestRoundTrip writes random arrays of every dtype and rank with random
// headers and reads them back: the same bits, shape, geometry and affine,
// through memory, .nii and .nii.gz files.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	dir := t.TempDir()
	for _, dt := range WritableDTypes {
		for rank := 1; rank <= maxRank; rank++ {
			shape := make([]int, rank)
			for i := range shape {
				shape[i] = 1 + rng.IntN(max(2, 9-rank))
			}
			a := randomArray(t, rng, dt, shape)
			h := randomHeader(rng)
			h.Dim[0] = int16(rank)
			for i, n := range shape {
				h.Dim[i+1] = int16(n)
			}
			for _, name := range []string{"", "v.nii", "v.nii.gz"} {
				var b nd.Array
				var got *Header
				var err error
				if name == "" {
					var buf bytes.Buffer
					if err := Write(&buf, a, h); err != nil {
						t.Fatal(err)
					}
					if buf.Len() != dataOffset+a.Len()*dt.Size() {
						t.Errorf("%v %v: %d bytes written", dt, shape, buf.Len())
					}
					b, got, err = Read(&buf)
				} else {
					path := filepath.Join(dir, name)
					if err := WriteFile(path, a, h); err != nil {
						t.Fatal(err)
					}
					b, got, err = ReadFile(path)
				}
				if err != nil {
					t.Fatalf("%v %v %q: %v", dt, shape, name, err)
				}
				if !slices.Equal(b.Shape, shape) || b.DType() != dt || !bytes.Equal(dataBytes(t, a), dataBytes(t, b)) {
					t.Fatalf("%v %v %q: read back %v %v, or other values", dt, shape, name, b.DType(), b.Shape)
				}
				if !sameGeometry(h, got) || got.Affine() != h.Affine() {
					t.Errorf("%v %v %q: header changed: affine %v, want %v", dt, shape, name, got.Affine(), h.Affine())
				}
				if got.SclSlope != 1 || got.SclInter != 0 || got.VoxOffset != dataOffset || got.BigEndian {
					t.Errorf("%v %v %q: scl %v %v, vox_offset %v", dt, shape, name, got.SclSlope, got.SclInter, got.VoxOffset)
				}
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("WriteFile left %d files in its directory, want 2", len(entries))
	}
}

// TestTranspose checks the axis order on a hand-made file: voxel (x, y, z)
// is stored at x + nx·(y + ny·z) and read to a[x, y, z].
func TestTranspose(t *testing.T) {
	nx, ny, nz := 4, 3, 2
	h := NewHeader()
	h.Dim = [8]int16{3, int16(nx), int16(ny), int16(nz), 1, 1, 1, 1}
	h.Datatype, h.Bitpix, h.VoxOffset, h.SclSlope = 4, 16, dataOffset, 1
	raw, err := h.encode()
	if err != nil {
		t.Fatal(err)
	}
	file := append(raw[:], 0, 0, 0, 0)
	for z := range nz {
		for y := range ny {
			for x := range nx {
				file = append(file, byte(x+10*y+100*z), 0)
			}
		}
	}
	a, _, err := Read(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	d := a.Data.([]int16)
	for x := range nx {
		for y := range ny {
			for z := range nz {
				if v := d[(x*ny+y)*nz+z]; v != int16(x+10*y+100*z) {
					t.Fatalf("a[%d, %d, %d] = %d", x, y, z, v)
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := Write(&buf, a, h); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes()[dataOffset:], file[dataOffset:]) {
		t.Error("Write does not store Fortran order")
	}
}

// TestWriteHeaderRepairs checks the fields Write sets or repairs: a new
// axis gets voxel size 1, qfac 0 becomes 1, cal_min and cal_max bound the
// finite values, and the caller's header is not modified.
func TestWriteHeaderRepairs(t *testing.T) {
	h := NewHeader()
	h.Dim = [8]int16{2, 3, 2, 1, 1, 1, 1, 1}
	h.Pixdim = [8]float32{0, 2, 3, 0, -4, 5, 6, 7}
	h.SclSlope, h.SclInter = 3, 4
	before := *h
	a, _ := nd.FromSlice([]float64{1, math.NaN(), -math.Inf(1), 0.1, 1e40, -3, 2, 2, 2, 2, 2, 2}, 3, 2, 2)
	var buf bytes.Buffer
	if err := Write(&buf, a, h); err != nil {
		t.Fatal(err)
	}
	if *h != before {
		t.Error("Write modified its header argument")
	}
	_, got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if want := [8]float32{1, 2, 3, 1, -4, 5, 6, 7}; got.Pixdim != want {
		t.Errorf("pixdim %v, want %v", got.Pixdim, want)
	}
	if got.CalMin != -3 || got.CalMax != math.MaxFloat32 {
		t.Errorf("cal range [%v, %v], want [-3, MaxFloat32]", got.CalMin, got.CalMax)
	}
	if lo, hi := finiteRange([]float64{0.1, 0.3}); float64(lo) > 0.1 || float64(hi) < 0.3 {
		t.Errorf("finiteRange rounds inwards: %v %v", lo, hi)
	}
	if got.SclSlope != 1 || got.SclInter != 0 || got.Datatype != 64 || got.Bitpix != 64 {
		t.Errorf("scl %v %v, datatype %d, bitpix %d", got.SclSlope, got.SclInter, got.Datatype, got.Bitpix)
	}
}

// TestAffineFallbacks checks Affine where nibabel refuses a qform (as
// nifti1_io does) and the choice between sform, qform and base.
func TestAffineFallbacks(t *testing.T) {
	h := NewHeader()
	h.Dim = [8]int16{3, 3, 5, 7, 1, 1, 1, 1}
	h.Pixdim = [8]float32{0, -2, 3, 4}
	if got, want := h.Affine(), [4][4]float64{{2, 0, 0, -2}, {0, 3, 0, -6}, {0, 0, 4, -12}, {0, 0, 0, 1}}; got != want {
		t.Errorf("base %v, want %v", got, want)
	}
	h.QformCode = 1
	h.QOffset = [3]float32{1, 2, 3}
	if got, want := h.Affine(), [4][4]float64{{1, 0, 0, 1}, {0, 3, 0, 2}, {0, 0, 4, 3}, {0, 0, 0, 1}}; got != want {
		t.Errorf("qform with negative pixdim, qfac 0: %v, want %v", got, want)
	}
	h.Pixdim[0] = -0.5
	h.QuaternB = 1 // 180° about x; w² = 0
	if got, want := h.Affine(), [4][4]float64{{1, 0, 0, 1}, {0, -3, 0, 2}, {0, 0, 4, 3}, {0, 0, 0, 1}}; got != want {
		t.Errorf("qform with qfac < 0: %v, want %v", got, want)
	}
	h.SformCode = -1
	h.SRow[0][0] = 9
	if got := h.Affine(); got[0][0] != 9 || got[3][3] != 1 {
		t.Errorf("sform_code -1 (nibabel: ≠ 0) not used: %v", got)
	}
	if z := (&Header{Dim: [8]int16{9}}).PixDim(); len(z) != maxRank {
		t.Errorf("PixDim of a corrupt rank: %v", z)
	}
}
