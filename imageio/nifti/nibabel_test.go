package nifti

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixture is one entry of testdata/nibabel/expected.json, written by
// testdata/make_nifti.py: nibabel's view of a file.
type fixture struct {
	File      string         `json:"file"`
	Error     string         `json:"error"` // "", "format" or "unsupported"
	Shape     []int          `json:"shape"`
	DType     string         `json:"dtype"`
	Data      string         `json:"data"` // C-order little-endian bytes in hex
	Affine    [4][4]float64  `json:"affine"`
	QForm     [4][4]float64  `json:"qform"`
	SForm     [4][4]float64  `json:"sform"`
	Base      [4][4]float64  `json:"base"`
	Zooms     []float64      `json:"zooms"`
	BigEndian bool           `json:"big_endian"`
	Header    map[string]any `json:"header"` // every raw header field, by nibabel's name
}

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	b, err := os.ReadFile("testdata/nibabel/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var fs []fixture
	if err := json.Unmarshal(b, &fs); err != nil {
		t.Fatal(err)
	}
	return fs
}

// errorClass names the typed error err is, as the fixtures do.
func errorClass(err error) string {
	var fe *FormatError
	var ue *UnsupportedError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &fe):
		return "format"
	case errors.As(err, &ue):
		return "unsupported"
	}
	return "untyped"
}

// dataBytes is an array's data as little-endian bytes.
func dataBytes(t testing.TB, a nd.Array) []byte {
	b, err := binary.Append(nil, binary.LittleEndian, a.Data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNibabelFixtures reads every nibabel-written fixture and compares the
// array, affine, zooms and every header field with nibabel's view.
func TestNibabelFixtures(t *testing.T) {
	for _, fx := range loadFixtures(t) {
		t.Run(fx.File, func(t *testing.T) {
			a, h, err := ReadFile(filepath.Join("testdata/nibabel", fx.File))
			if got := errorClass(err); got != fx.Error {
				t.Fatalf("error %v (%s), want class %q", err, got, fx.Error)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "nifti: ") {
					t.Errorf("error %q lacks the package prefix", err)
				}
				return
			}
			if !slices.Equal(a.Shape, fx.Shape) || a.DType().String() != fx.DType {
				t.Fatalf("got %v %v, want %s %v", a.DType(), a.Shape, fx.DType, fx.Shape)
			}
			if got := hex.EncodeToString(dataBytes(t, a)); got != fx.Data {
				t.Errorf("voxels differ from nibabel's\n got %s\nwant %s", got, fx.Data)
			}
			if h.BigEndian != fx.BigEndian {
				t.Errorf("BigEndian %v, want %v", h.BigEndian, fx.BigEndian)
			}
			compareAffine(t, "Affine", h.Affine(), fx.Affine)
			compareAffine(t, "qform", h.qformAffine(), fx.QForm)
			compareAffine(t, "sform", h.sformAffine(), fx.SForm)
			compareAffine(t, "base", h.baseAffine(), fx.Base)
			if !slices.Equal(h.PixDim(), fx.Zooms) {
				t.Errorf("PixDim %v, want %v", h.PixDim(), fx.Zooms)
			}
			_, _, scaled := (&Header{SclSlope: jsonFloat32(fx.Header["scl_slope"]), SclInter: jsonFloat32(fx.Header["scl_inter"])}).scaling()
			got := headerFields(h)
			for name, want := range fx.Header {
				if scaled && (name == "scl_slope" || name == "scl_inter") {
					continue // reset on read; checked below
				}
				if !sameJSON(got[name], want) {
					t.Errorf("%s = %v, nibabel %v", name, got[name], want)
				}
			}
			if scaled && (h.SclSlope != 1 || h.SclInter != 0) {
				t.Errorf("scaled volume: header keeps scl %v, %v; want 1, 0", h.SclSlope, h.SclInter)
			}
		})
	}
}

// compareAffine allows the last bits of float64 for the quaternion
// transform, which nibabel computes in long double; the others are exact.
func compareAffine(t *testing.T, what string, got, want [4][4]float64) {
	t.Helper()
	for r := range got {
		for c := range got[r] {
			if d := math.Abs(got[r][c] - want[r][c]); d > 1e-13*max(1, math.Abs(want[r][c])) {
				t.Errorf("%s[%d][%d] = %v, nibabel %v", what, r, c, got[r][c], want[r][c])
			}
		}
	}
	if what != "qform" && what != "Affine" && got != want {
		t.Errorf("%s = %v, nibabel %v exactly", what, got, want)
	}
}

// headerFields is h as nibabel's header keys name its fields, the unnamed
// ones read from Raw (which must be little-endian by now).
func headerFields(h *Header) map[string]any {
	le := binary.LittleEndian
	f32s := func(v []float32) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	i16s := func(v []int16) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	cstr := func(b []byte) string { s, _, _ := strings.Cut(string(b), "\x00"); return s }
	return map[string]any{
		"sizeof_hdr":     float64(int32(le.Uint32(h.Raw[0:]))),
		"data_type":      cstr(h.Raw[4:14]),
		"db_name":        cstr(h.Raw[14:32]),
		"extents":        float64(int32(le.Uint32(h.Raw[32:]))),
		"session_error":  float64(int16(le.Uint16(h.Raw[36:]))),
		"regular":        cstr(h.Raw[38:39]),
		"dim_info":       float64(h.DimInfo),
		"dim":            i16s(h.Dim[:]),
		"intent_p1":      float64(h.IntentP[0]),
		"intent_p2":      float64(h.IntentP[1]),
		"intent_p3":      float64(h.IntentP[2]),
		"intent_code":    float64(h.IntentCode),
		"datatype":       float64(h.Datatype),
		"bitpix":         float64(h.Bitpix),
		"slice_start":    float64(h.SliceStart),
		"pixdim":         f32s(h.Pixdim[:]),
		"vox_offset":     float64(h.VoxOffset),
		"scl_slope":      float64(h.SclSlope),
		"scl_inter":      float64(h.SclInter),
		"slice_end":      float64(h.SliceEnd),
		"slice_code":     float64(h.SliceCode),
		"xyzt_units":     float64(h.XYZTUnits),
		"cal_max":        float64(h.CalMax),
		"cal_min":        float64(h.CalMin),
		"slice_duration": float64(h.SliceDuration),
		"toffset":        float64(h.TOffset),
		"glmax":          float64(int32(le.Uint32(h.Raw[140:]))),
		"glmin":          float64(int32(le.Uint32(h.Raw[144:]))),
		"descrip":        h.Descrip,
		"aux_file":       h.AuxFile,
		"qform_code":     float64(h.QformCode),
		"sform_code":     float64(h.SformCode),
		"quatern_b":      float64(h.QuaternB),
		"quatern_c":      float64(h.QuaternC),
		"quatern_d":      float64(h.QuaternD),
		"qoffset_x":      float64(h.QOffset[0]),
		"qoffset_y":      float64(h.QOffset[1]),
		"qoffset_z":      float64(h.QOffset[2]),
		"srow_x":         f32s(h.SRow[0][:]),
		"srow_y":         f32s(h.SRow[1][:]),
		"srow_z":         f32s(h.SRow[2][:]),
		"intent_name":    h.IntentName,
		"magic":          cstr(h.Raw[344:348]),
	}
}

// jsonFloat reads a number the fixture script wrote, where non-finite
// values are the strings "nan", "inf" and "-inf".
func jsonFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		switch x {
		case "nan":
			return math.NaN(), true
		case "inf":
			return math.Inf(1), true
		case "-inf":
			return math.Inf(-1), true
		}
	}
	return 0, false
}

func jsonFloat32(v any) float32 { f, _ := jsonFloat(v); return float32(f) }

// sameJSON compares a value of headerFields with the fixture's.
func sameJSON(got, want any) bool {
	switch g := got.(type) {
	case string:
		return g == want
	case float64:
		w, ok := jsonFloat(want)
		return ok && (g == w || math.IsNaN(g) && math.IsNaN(w))
	case []float64:
		ws, ok := want.([]any)
		if !ok || len(ws) != len(g) {
			return false
		}
		for i := range g {
			if !sameJSON(g[i], ws[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// goldenName is the Go-written file for a fixture: its stem plus .nii.
func goldenName(file string) string {
	return strings.TrimSuffix(strings.TrimSuffix(file, ".gz"), ".nii") + ".nii"
}

// defaultHeaderArray is written with a nil header to
// testdata/golden/default_header.nii: a[x, y, z] = x + 10y + 100z.
func defaultHeaderArray() nd.Array {
	a, _ := nd.New(nd.Int16, 4, 3, 2)
	d := a.Data.([]int16)
	i := 0
	for x := range 4 {
		for y := range 3 {
			for z := range 2 {
				d[i] = int16(x + 10*y + 100*z)
				i++
			}
		}
	}
	return a
}

// TestGolden writes every readable fixture back with the header read from
// it, and a volume with a nil header, and compares the bytes with
// testdata/golden (rewritten by -update); make_nifti.py --check verifies
// that nibabel reads those files as it read the fixtures. Each golden file
// must also read back to the same array and header here.
func TestGolden(t *testing.T) {
	type job struct {
		name string
		a    nd.Array
		h    *Header
	}
	jobs := []job{{"default_header.nii", defaultHeaderArray(), nil}}
	for _, fx := range loadFixtures(t) {
		if fx.Error != "" {
			continue
		}
		a, h, err := ReadFile(filepath.Join("testdata/nibabel", fx.File))
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job{goldenName(fx.File), a, h})
	}
	for _, j := range jobs {
		var buf bytes.Buffer
		if err := Write(&buf, j.a, j.h); err != nil {
			t.Fatalf("%s: %v", j.name, err)
		}
		path := filepath.Join("testdata/golden", j.name)
		if *update {
			if err := os.MkdirAll("testdata/golden", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if want, err := os.ReadFile(path); err != nil || !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s is missing or differs (%v); run go test -run TestGolden -update, then make_nifti.py --check", path, err)
		}
		b, h, err := Read(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("%s: reading back: %v", j.name, err)
		}
		if !slices.Equal(b.Shape, j.a.Shape) || !bytes.Equal(dataBytes(t, b), dataBytes(t, j.a)) {
			t.Errorf("%s: the array changed on the way back", j.name)
		}
		want := j.h
		if want == nil {
			want = NewHeader()
		}
		if h.Affine() != want.Affine() && want.Dim[0] != 0 {
			t.Errorf("%s: affine %v, want %v", j.name, h.Affine(), want.Affine())
		}
	}
}
