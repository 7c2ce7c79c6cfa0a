package beam_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	ndbeam "github.com/ndconv/ndconv/beam"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

// TestJobOnPrism runs a 64-block job of ndconv's own plan format (planned
// by `ndconv plan`) on Prism, through the job package's binding, and
// compares its output, bit for bit, with `ndconv worker`'s run of the
// same job.
func TestJobOnPrism(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build ndconv: %v", err)
	}
	dir := t.TempDir()
	cli := filepath.Join(dir, "ndconv")
	// The CLI of this checkout: the module above this one.
	if out, err := exec.Command(goCmd, "build", "-C", "..", "-o", cli, "./cmd/ndconv").CombinedOutput(); err != nil {
		t.Fatalf("building ndconv: %v\n%s", err, out)
	}
	ctx := context.Background()

	// A 64³ float32 input in 16³ chunks: 64 blocks of one chunk.
	rng := rand.New(rand.NewPCG(28, 2))
	data := make([]float32, 64*64*64)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	in, err := nd.FromSlice(data, 64, 64, 64)
	if err != nil {
		t.Fatal(err)
	}
	chunk := []int{16, 16, 16}
	z, err := zarr.Create(ctx, zarr.NewDirStore(filepath.Join(dir, "in.zarr")), "", zarr.Meta{Format: 2, Shape: in.Shape, DType: in.DType(), ChunkShape: chunk})
	if err != nil {
		t.Fatal(err)
	}
	if err := z.WriteRegion(ctx, []int{0, 0, 0}, in); err != nil {
		t.Fatal(err)
	}
	ndconv := func(args ...string) {
		t.Helper()
		cmd := exec.Command(cli, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ndconv %v: %v\n%s", args, err, out)
		}
	}
	for _, out := range []string{"beam", "worker"} {
		ndconv("plan", "-q", "-k", "gaussian:sigma=1", "--blocks", "16,16,16", "in.zarr", out+".zarr", "-o", out+".json")
	}
	ndconv("worker", "-q", "--plan", "worker.json", "--index", "0", "--count", "1")

	planPath := filepath.Join(dir, "beam.json")
	// The plan's URLs are relative to the directory it was planned in, as
	// a worker started there reads them.
	t.Chdir(dir)
	plan, job, err := ndbeam.Load(ctx, ndbeam.JobFormat, planPath)
	if err != nil {
		t.Fatal(err)
	}
	if job.Blocks() != 64 {
		t.Fatalf("the plan has %d blocks, want 64", job.Blocks())
	}
	p, s := beam.NewPipelineWithRoot()
	count, err := ndbeam.Pipeline(s, ndbeam.JobFormat, plan)
	if err != nil {
		t.Fatal(err)
	}
	passert.Equals(s, count, 64)
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	if done, total, err := job.Status(ctx); err != nil || done != 64 || total != 64 {
		t.Errorf("Status = %d, %d, %v; want 64, 64, nil", done, total, err)
	}
	read := func(name string) []byte {
		t.Helper()
		a, err := zarr.Open(ctx, zarr.NewDirStore(filepath.Join(dir, name)), "")
		if err != nil {
			t.Fatal(err)
		}
		dst, err := nd.New(a.DType(), a.Shape()...)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.ReadRegion(ctx, make([]int, len(a.Shape())), a.Shape(), dst); err != nil {
			t.Fatal(err)
		}
		return dst.Bytes()
	}
	if !bytes.Equal(read("beam.zarr"), read("worker.zarr")) {
		t.Error("the pipeline's output differs from ndconv worker's")
	}
}
