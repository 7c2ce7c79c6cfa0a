package ndconv_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/cuda"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/plan"
)

// TestBlocksOnDevices spreads a volume's blocks over several devices — the
// CPU named twice here; every CUDA GPU (cuda:all) and the CPU beside it
// where CUDA is available — and checks the output equals the plan's own
// Execute bit for bit; bad device lists are refused with the device named.
func TestBlocksOnDevices(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(30, 4))
	shape := []int{19, 23, 17}
	x := enginetest.RandomArray(rng, nd.Float32, shape...)
	k := enginetest.RandomKernel(rng, false, 3, 5, 3)
	lists := []string{"cpu,cpu"}
	if cuda.Available() == nil {
		lists = append(lists, "cuda:all", "cuda:all,cpu")
	}
	openBefore := cuda.IsOpen(0) // held by another test: not this one's to check
	p, err := ndconv.NewPlan(ndconv.Correlation, shape, nd.Float32, ndconv.Options{Device: "cpu", Method: ndconv.Direct, Border: nd.Mirror}, k)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	want, err := p.Execute(ctx, ndconv.Array{}, x)
	if err != nil {
		t.Fatal(err)
	}
	for _, devices := range lists {
		got, _ := nd.New(nd.Float32, shape...)
		err := p.ExecuteBlocks(ctx, ndconv.ArraySource{Array: x}, ndconv.ArraySink{Array: got}, ndconv.BlockOptions{Shape: []int{5, 7, 17}, Devices: devices})
		if err != nil {
			t.Fatalf("%s: %v", devices, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: the blocks differ from Execute's output", devices)
		}
	}
	for _, bad := range []string{"nowhere:all", "cpu,bogus", "opencl:7:7:7"} {
		got, _ := nd.New(nd.Float32, shape...)
		err := p.ExecuteBlocks(ctx, ndconv.ArraySource{Array: x}, ndconv.ArraySink{Array: got}, ndconv.BlockOptions{Devices: bad})
		var ue *nd.UnsupportedError
		var un *plan.UnavailableError
		if !errors.As(err, &ue) && !errors.As(err, &un) {
			t.Errorf("Devices %q: %v, want an unsupported or unavailable device", bad, err)
		}
	}
	// The plan holds the GPUs it spread blocks over until its Close, so
	// that the next call finds their contexts made.
	if cuda.Available() == nil {
		if !cuda.IsOpen(0) {
			t.Error("cuda:0 is not held open after ExecuteBlocks on cuda:all")
		}
		q, err := ndconv.NewPlan(ndconv.Correlation, shape, nd.Float32, ndconv.Options{Device: "cpu", Method: ndconv.Direct}, k)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.ExecuteBlocks(ctx, ndconv.ArraySource{Array: x}, ndconv.ArraySink{Array: want}, ndconv.BlockOptions{Devices: "cuda:0"}); err != nil {
			t.Fatal(err)
		}
		q.Close()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if cuda.IsOpen(0) && !openBefore {
			t.Error("cuda:0 is still open after the plans' Close")
		}
	}
}

// TestBlocksDeviceScaling times a 1024³ uint8 volume with a 7³ kernel in
// 256³ blocks on cuda:0 alone and on every CUDA GPU (cuda:all), from host
// memory, and logs the throughputs and their ratio; the outputs must be
// equal. A measurement for the device runs (NDCONV_SCALING=1), not a
// timed assertion.
func TestBlocksDeviceScaling(t *testing.T) {
	if os.Getenv("NDCONV_SCALING") != "1" || cuda.Available() != nil {
		t.Skip("NDCONV_SCALING=1 on a CUDA host")
	}
	ctx := context.Background()
	n := 1024
	shape := []int{n, n, n}
	x, _ := nd.New(nd.Uint8, shape...)
	b := x.Bytes()
	for i := range b {
		b[i] = byte(i*7 + i/n)
	}
	k := enginetest.RandomKernel(rand.New(rand.NewPCG(30, 5)), false, 7, 7, 7)
	p, err := ndconv.NewPlan(ndconv.Correlation, shape, nd.Uint8, ndconv.Options{Device: "cuda:0", Method: ndconv.Direct}, k)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// NDCONV_SCALING_INFLIGHT: the blocks in flight to try, a comma list
	// (0: BlockOptions' default of 2 per device).
	inFlights := []int{0}
	if v := os.Getenv("NDCONV_SCALING_INFLIGHT"); v != "" {
		inFlights = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("NDCONV_SCALING_INFLIGHT: %v", err)
			}
			inFlights = append(inFlights, n)
		}
	}
	var outs [][]byte
	var rates []float64
	for _, inFlight := range inFlights {
		// NDCONV_SCALING_DEVICES: other device lists to time after these,
		// separated by ';' ("cuda:1;cuda:0,cuda:1").
		lists := []string{"cuda:0", "cuda:all", "cuda:0", "cuda:all"}
		if v := os.Getenv("NDCONV_SCALING_DEVICES"); v != "" {
			lists = append(lists, strings.Split(v, ";")...)
		}
		for _, devices := range lists {
			got, _ := nd.New(nd.Uint8, shape...)
			// Where the workers' time went, summed over them: reading
			// (gathering a block's boxes), making executables, executing,
			// writing (scattering the output).
			var stages [4]atomic.Int64
			ndconv.SetBlockTrace(func(stage string, d time.Duration) {
				stages[map[string]int{"new": 1, "execute": 2}[stage]].Add(int64(d))
			})
			src := timedSource{ndconv.ArraySource{Array: x}, &stages[0]}
			sink := timedSink{ndconv.ArraySink{Array: got}, &stages[3]}
			start := time.Now()
			err := p.ExecuteBlocks(ctx, src, sink, ndconv.BlockOptions{Shape: []int{256, 256, 256}, Devices: devices, InFlight: inFlight})
			ndconv.SetBlockTrace(nil)
			if err != nil {
				t.Fatal(err)
			}
			secs := time.Since(start).Seconds()
			rate := 2 * float64(len(b)) / secs / 1e9
			rates = append(rates, rate)
			outs = append(outs, got.Bytes())
			sum := func(i int) float64 { return time.Duration(stages[i].Load()).Seconds() }
			t.Logf("%-9s in flight %2d: %.3f s, %.2f GB/s in and out; summed s: read %.2f, new %.2f, execute %.2f, write %.2f",
				devices, inFlight, secs, rate, sum(0), sum(1), sum(2), sum(3))
		}
		n := len(rates) - (len(lists) - 4)
		t.Logf("in flight %d: cuda:all at %.2f× cuda:0's rate (second runs)", inFlight, rates[n-1]/rates[n-2])
	}
	for i := 1; i < len(outs); i++ {
		if !bytes.Equal(outs[i], outs[0]) {
			t.Errorf("run %d differs from cuda:0's output", i)
		}
	}
	// The host's ceiling: the same blocks gathered, computed and scattered
	// on the CPU's cores with a kernel of one nonzero tap (the same halo,
	// next to no arithmetic), as many blocks in flight as cores.
	centre := make([]float64, 7*7*7)
	centre[len(centre)/2] = 1
	h, err := ndconv.NewPlan(ndconv.Correlation, shape, nd.Uint8, ndconv.Options{Device: "cpu", Method: ndconv.Direct}, nd.Kernel{Shape: []int{7, 7, 7}, Weights: centre})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for range 2 {
		got, _ := nd.New(nd.Uint8, shape...)
		start := time.Now()
		if err := h.ExecuteBlocks(ctx, ndconv.ArraySource{Array: x}, ndconv.ArraySink{Array: got}, ndconv.BlockOptions{Shape: []int{256, 256, 256}, InFlight: runtime.NumCPU()}); err != nil {
			t.Fatal(err)
		}
		secs := time.Since(start).Seconds()
		t.Logf("host ceiling (cpu, one tap, %d in flight): %.3f s, %.2f GB/s in and out", runtime.NumCPU(), secs, 2*float64(len(b))/secs/1e9)
		if !bytes.Equal(got.Bytes(), b) {
			t.Error("the one-tap kernel did not copy the volume")
		}
	}
	ds, _ := plan.ParseDevices("cuda:all")
	t.Logf("%d GPUs", len(ds))
}

// timedSource and timedSink add the time of each read and write to d.
type timedSource struct {
	ndconv.BlockSource
	d *atomic.Int64
}

func (s timedSource) ReadRegion(start, shape []int, dst nd.Array) error {
	t := time.Now()
	defer func() { s.d.Add(int64(time.Since(t))) }()
	return s.BlockSource.ReadRegion(start, shape, dst)
}

type timedSink struct {
	ndconv.BlockSink
	d *atomic.Int64
}

func (s timedSink) WriteRegion(start []int, src nd.Array) error {
	t := time.Now()
	defer func() { s.d.Add(int64(time.Since(t))) }()
	return s.BlockSink.WriteRegion(start, src)
}
