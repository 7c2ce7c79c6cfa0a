package ndconv_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"

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
}
