package imageio

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// TestMapFile maps .npy files of every dtype and a .raw file and compares
// them with what ReadFile reads.
func TestMapFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	dir := t.TempDir()
	for _, dt := range nd.DTypes {
		a := randArray(t, rng, dt, []int{7, 5, 3})
		for _, name := range []string{"a.npy", "a.raw"} {
			path := filepath.Join(dir, name)
			if err := WriteFile(path, a, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			raw := RawOptions{Shape: a.Shape, DType: dt}
			m, err := MapFile(path, raw)
			if err != nil {
				t.Fatalf("%v %s: %v", dt, name, err)
			}
			want, _, err := ReadFile(path, raw)
			if err != nil {
				t.Fatal(err)
			}
			if !sameArray(m.Array, want) {
				t.Errorf("%v %s: the mapped array differs from the one read", dt, name)
			}
			m.Release()
			if !sameArray(m.Array, want) {
				t.Errorf("%v %s: after Release, the mapped array differs", dt, name)
			}
			if err := m.Close(); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestMapFileRefuses checks that data that cannot be used in place are
// ErrNotMappable, and bad files errors of their own.
func TestMapFileRefuses(t *testing.T) {
	dir := t.TempDir()
	a, _ := nd.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	for name, header := range map[string]string{
		"big.npy":     "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }\n",
		"fortran.npy": "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n",
	} {
		order := binary.AppendByteOrder(binary.LittleEndian)
		if name == "big.npy" {
			order = binary.BigEndian
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, npyBytes(1, header, encodeValues(a, order)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := MapFile(path, RawOptions{}); !errors.Is(err, ErrNotMappable) {
			t.Errorf("%s: %v, want ErrNotMappable", name, err)
		}
	}
	path := filepath.Join(dir, "short.npy")
	os.WriteFile(path, npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (20, 3), }\n", encodeValues(a, binary.LittleEndian)), 0o644)
	var fe *FormatError
	if _, err := MapFile(path, RawOptions{}); !errors.As(err, &fe) {
		t.Errorf("a truncated .npy: %v, want a *FormatError", err)
	}
	path = filepath.Join(dir, "a.raw")
	os.WriteFile(path, make([]byte, 10), 0o644)
	if _, err := MapFile(path, RawOptions{Shape: []int{3}, DType: nd.Float32}); !errors.As(err, &fe) {
		t.Errorf("a .raw of the wrong size: %v, want a *FormatError", err)
	}
}

// TestWriteFileChunks writes an array in pieces and compares the file with
// WriteFile's; a failing producer or a short output leaves no file.
func TestWriteFileChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	dir := t.TempDir()
	a := randArray(t, rng, nd.Int16, []int{6, 4})
	data := a.Data.([]int16)
	for _, name := range []string{"x.npy", "x.raw"} {
		want, got := filepath.Join(dir, "want-"+name), filepath.Join(dir, name)
		WriteFile(want, a, WriteOptions{})
		err := WriteFileChunks(got, nd.Int16, a.Shape, func(write func(nd.Array) error) error {
			for off := 0; off < len(data); off += 5 {
				piece, _ := nd.FromSlice(data[off:min(off+5, len(data))], min(5, len(data)-off))
				if err := write(piece); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		wb, _ := os.ReadFile(want)
		gb, _ := os.ReadFile(got)
		if string(wb) != string(gb) {
			t.Errorf("%s: written in pieces differs from WriteFile's", name)
		}
	}
	for what, produce := range map[string]func(write func(nd.Array) error) error{
		"failing": func(write func(nd.Array) error) error { return errors.New("boom") },
		"short": func(write func(nd.Array) error) error {
			piece, _ := nd.FromSlice(data[:3], 3)
			return write(piece)
		},
		"wrong dtype": func(write func(nd.Array) error) error {
			piece, _ := nd.FromSlice(make([]float32, 24), 24)
			return write(piece)
		},
	} {
		path := filepath.Join(dir, "fail.npy")
		if err := WriteFileChunks(path, nd.Int16, a.Shape, produce); err == nil {
			t.Errorf("%s: no error", what)
		}
		entries, _ := filepath.Glob(filepath.Join(dir, "*fail*"))
		if len(entries) != 0 {
			t.Errorf("%s: left %v", what, entries)
		}
	}
}

// TestMapFileBeyondMemory maps a sparse .raw file of more elements than
// nd.MaxElements (a volume larger than memory, streamed chunk by chunk)
// and reads a value at each end, while reading the same file whole is
// refused with an error instead of an allocation.
func TestMapFileBeyondMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.raw")
	shape := []int{2, 1 << 17, 1 << 17} // 2^35 uint8
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: no disk blocks but the last one written.
	if _, err := f.WriteAt([]byte{7}, 1<<35-1); err != nil {
		t.Skipf("no sparse file of 32 GiB here: %v", err)
	}
	f.Close()
	raw := RawOptions{Shape: shape, DType: nd.Uint8}
	m, err := MapFile(path, raw)
	if err != nil {
		t.Skipf("no 32 GiB map here: %v", err)
	}
	defer m.Close()
	data := m.Data.([]uint8)
	if len(data) != 1<<35 || data[0] != 0 || data[len(data)-1] != 7 {
		t.Errorf("mapped %d elements, ends %d and %d; want 2^35, 0 and 7", len(data), data[0], data[len(data)-1])
	}
	if _, _, err := ReadFile(path, raw); err == nil {
		t.Error("reading 2^35 elements into memory: no error")
	}
}
