package ndconv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
)

// TestExecuteChunks checks that ExecuteChunks hands over chunks that, put
// at their offsets, equal the CPU's unchunked Execute bit for bit, for
// direct and separable kernels, banks, every border and mode, under
// budgets from one row to the whole problem, on every device here (GPUs
// under the one budget that splits every problem: each new chunk geometry
// builds its kernels anew).
func TestExecuteChunks(t *testing.T) {
	for _, dev := range testDevices(t) {
		cases, budgets := 20, []int64{200, 1000, 1 << 20}
		if dev != "cpu" {
			cases, budgets = 10, []int64{200} // every border, mode, method and bank size
		}
		t.Run(dev, func(t *testing.T) { testExecuteChunks(t, dev, cases, budgets) })
	}
}

func testExecuteChunks(t *testing.T, dev string, cases int, budgets []int64) {
	rng := rand.New(rand.NewPCG(21, 22))
	borders := []nd.Border{nd.Reflect, nd.Mirror, nd.Nearest, nd.Wrap, nd.Constant}
	for i := range cases {
		shape := [][]int{{31, 7}, {9, 5, 4}, {50}}[i%3]
		kshape := [][]int{{5, 3}, {3, 3}, {9}}[i%3]
		var kernels []ndconv.Kernel
		for range 1 + i%2 {
			if i%4 < 2 {
				kernels = append(kernels, enginetest.RandomFactors(rng, kshape...))
			} else {
				kernels = append(kernels, enginetest.RandomKernel(rng, true, kshape...))
			}
		}
		opt := ndconv.Options{Border: borders[i%5], CVal: 1.5, Mode: nd.Mode(i % 3), Device: "cpu", DType: nd.Float32}
		src := enginetest.RandomArray(rng, nd.Uint16, shape...)
		p, err := ndconv.NewPlan(ndconv.Correlation, shape, nd.Uint16, opt, kernels...)
		if err != nil {
			t.Fatal(err)
		}
		want, err := p.Execute(context.Background(), ndconv.Array{}, src)
		if err != nil {
			t.Fatal(err)
		}
		if dev != "cpu" {
			opt.Device = dev
			if p, err = ndconv.NewPlan(ndconv.Correlation, shape, nd.Uint16, opt, kernels...); err != nil {
				t.Fatal(err)
			}
		}
		for _, budget := range budgets {
			name := fmt.Sprintf("%v/%v/%v/bank%d/budget%d on %s", shape, opt.Border, opt.Mode, len(kernels), budget, dev)
			got, _ := nd.New(nd.Float32, p.Shape()...)
			chunks := 0
			err := p.ExecuteChunks(context.Background(), src, budget, func(off int, out ndconv.Array) error {
				copy(got.Data.([]float32)[off:], out.Data.([]float32))
				chunks++
				return nil
			})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s (%d chunks): differs from Execute", name, chunks)
			}
			if budget == 200 && chunks < 2 {
				t.Errorf("%s: %d chunks under a 200-byte budget", name, chunks)
			}
		}
	}
}

// TestExecuteChunksWholeRows checks that a budget below one plane with its
// halo is raised so that a volume still splits into whole planes.
func TestExecuteChunksWholeRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	src := enginetest.RandomArray(rng, nd.Float32, 6, 20, 20)
	p, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, nd.Float32, ndconv.Options{Device: "cpu"}, enginetest.RandomKernel(rng, false, 5, 5, 5))
	if err != nil {
		t.Fatal(err)
	}
	chunks := 0
	err = p.ExecuteChunks(context.Background(), src, 2000, func(off int, out ndconv.Array) error {
		chunks++
		if off%400 != 0 || out.Len()%400 != 0 {
			t.Errorf("a chunk of %d elements at %d: not whole planes of 400", out.Len(), off)
		}
		return nil
	})
	if err != nil || chunks < 2 {
		t.Errorf("%d chunks, %v", chunks, err)
	}
}

// TestExecuteChunksSinkError: a sink's error stops the chunks (none is
// handed over after it) and is what ExecuteChunks returns.
func TestExecuteChunksSinkError(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	src := enginetest.RandomArray(rng, nd.Float32, 64, 16)
	p, err := ndconv.NewPlan(ndconv.Correlation, src.Shape, nd.Float32, ndconv.Options{Device: "cpu"}, enginetest.RandomKernel(rng, false, 3, 3))
	if err != nil {
		t.Fatal(err)
	}
	full := errors.New("disk full")
	calls := 0
	err = p.ExecuteChunks(context.Background(), src, 1000, func(off int, out ndconv.Array) error {
		if calls++; calls == 2 {
			return full
		}
		return nil
	})
	if !errors.Is(err, full) || calls != 2 {
		t.Errorf("sink failing at its second chunk: %d calls, error %v", calls, err)
	}
}

// TestExecuteChunksBeyondMemory plans a volume of more elements than
// nd.MaxElements (a sparse mapped file, as the CLI streams one) and runs
// its first chunks: planning and splitting allocate nothing of the whole.
func TestExecuteChunksBeyondMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.raw")
	shape := []int{1 << 11, 1 << 12, 1 << 12} // 2^35 uint8
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{9}, 1<<35-1); err != nil {
		t.Skipf("no sparse file of 32 GiB here: %v", err)
	}
	f.Close()
	m, err := imageio.MapFile(path, imageio.RawOptions{Shape: shape, DType: nd.Uint8})
	if err != nil {
		t.Skipf("no 32 GiB map here: %v", err)
	}
	defer m.Close()
	p, err := ndconv.NewPlan(ndconv.Correlation, shape, nd.Uint8, ndconv.Options{Device: "cpu"}, ndconv.Kernel{Shape: []int{3, 1, 1}, Weights: []float64{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("enough")
	chunks := 0
	err = p.ExecuteChunks(context.Background(), m.Array, 1<<20, func(off int, out ndconv.Array) error {
		if chunks++; off != 0 || out.Len() == 0 || out.Len() > 1<<22 {
			t.Errorf("chunk at %d of %d elements", off, out.Len())
		}
		for _, v := range out.Data.([]uint8) {
			if v != 0 {
				t.Fatalf("a zero input gave %d", v)
			}
		}
		return stop
	})
	if !errors.Is(err, stop) || chunks != 1 {
		t.Errorf("%d chunks, %v", chunks, err)
	}
}

// TestFilterChunksTerms streams filters of several terms (gradient
// magnitude, Laplacian of Gaussian), alone and in banks with single-kernel
// filters, on the CPU: the chunks equal FilterPlan.Execute bit for bit
// for every border, several dtypes and budgets from one row a chunk to the
// whole problem. They were refused ("filters of several terms do not run
// chunk by chunk"), and the CLI read such inputs whole.
func TestFilterChunksTerms(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 7))
	named := [][]filters.Named{
		{filters.GaussianGradientMagnitude{Sigma: []float64{1}}},
		{filters.GaussianLaplace{Sigma: []float64{0.8}}},
		{filters.GaussianLaplace{Sigma: []float64{1}}, filters.Uniform{Size: []int{3}}, filters.GaussianGradientMagnitude{Sigma: []float64{0.7}}},
	}
	for i := range 24 {
		shape := [][]int{{23, 9}, {11, 6, 5}, {7, 4, 3, 5}}[i%3]
		in := []nd.DType{nd.Uint8, nd.Float32, nd.Int16, nd.Float64}[i%4]
		opt := ndconv.Options{Border: nd.Border(i % 5), CVal: 2.5, Device: "cpu", Workers: 1 + i%2}
		if i%5 == 3 {
			opt.DType = nd.Float32
		}
		src := enginetest.RandomArray(rng, in, shape...)
		fs, err := ndconv.BuildFilters(len(shape), nil, named[i%len(named)]...)
		if err != nil {
			t.Fatal(err)
		}
		fp, err := ndconv.NewFilterPlan(ndconv.Correlation, shape, in, opt, fs...)
		if err != nil {
			t.Fatal(err)
		}
		if !fp.Chunked() {
			t.Fatal("filters of several terms: not Chunked")
		}
		want, err := fp.Execute(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		for _, budget := range []int64{1, 3000, 1 << 30} {
			name := fmt.Sprintf("%v %v%v %v, budget %d", fs[0].Name, in, shape, opt.Border, budget)
			got, _ := nd.New(want.DType(), want.Shape...)
			chunks := 0
			err := fp.ExecuteChunks(context.Background(), src, budget, func(off int, out ndconv.Array) error {
				chunks++
				size := out.DType().Size()
				copy(got.Bytes()[off*size:], out.Bytes())
				return nil
			})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s (%d chunks): differs from Execute", name, chunks)
			}
			if budget == 1 && chunks != shape[0] {
				t.Errorf("%s: %d chunks, want one per row (%d)", name, chunks, shape[0])
			}
		}
		fp.Close()
	}
	// Empty inputs give no element, in one chunk.
	for _, shape := range [][]int{{0, 5}, {4, 0}, {0, 0, 3}} {
		fs, _ := ndconv.BuildFilters(len(shape), nil, named[2]...)
		fp, err := ndconv.NewFilterPlan(ndconv.Correlation, shape, nd.Uint8, ndconv.Options{Device: "cpu"}, fs...)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := nd.New(nd.Uint8, shape...)
		elems := 0
		if err := fp.ExecuteChunks(context.Background(), src, 1<<10, func(_ int, out ndconv.Array) error { elems += out.Len(); return nil }); err != nil || elems != 0 {
			t.Errorf("%v: %v, %d elements", shape, err, elems)
		}
		fp.Close()
	}
}
