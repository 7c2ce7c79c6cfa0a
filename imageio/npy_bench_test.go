package imageio

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// benchMB is the size of the benchmarks' float32 .npy file: 256 MB, or
// NDCONV_BENCH_NPY_MB.
func benchMB() int {
	if n, err := strconv.Atoi(os.Getenv("NDCONV_BENCH_NPY_MB")); err == nil && n > 0 {
		return n
	}
	return 256
}

func benchArray(b *testing.B) nd.Array {
	n := benchMB() << 20 / 4
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(i)
	}
	a, err := nd.FromSlice(data, n/1024, 1024)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkNPYFileWrite and BenchmarkNPYFileRead measure MB/s of a float32
// .npy file through the page cache (go test -bench NPYFile -benchtime 5x).
func BenchmarkNPYFileWrite(b *testing.B) {
	a := benchArray(b)
	path := filepath.Join(b.TempDir(), "bench.npy")
	b.SetBytes(int64(len(a.Bytes())))
	for b.Loop() {
		if err := WriteNPYFile(path, a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNPYFileRead(b *testing.B) {
	a := benchArray(b)
	path := filepath.Join(b.TempDir(), "bench.npy")
	if err := WriteNPYFile(path, a); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(a.Bytes())))
	for b.Loop() {
		if _, err := ReadNPYFile(path); err != nil {
			b.Fatal(err)
		}
	}
}
