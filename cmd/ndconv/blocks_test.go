package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

// blockCases is how many random jobs TestBlocksEqualWhole runs: 80 by
// default (about 4 s on 2 busy cores), NDCONV_BLOCKS_CASES sets it.
func blockCases() int {
	if n, err := strconv.Atoi(os.Getenv("NDCONV_BLOCKS_CASES")); err == nil && n > 0 {
		return n
	}
	return 80
}

// writeZarrInput writes a as a Zarr array at path with shards of shard
// (v3, chunks of chunk) or, with chunk nil, as v2 chunks of shard.
func writeZarrInput(t *testing.T, path string, a nd.Array, shard, chunk []int, comp string) {
	t.Helper()
	m := zarr.Meta{Shape: a.Shape, DType: a.DType(), ChunkShape: chunk, ShardShape: shard, Compressor: zarr.Compressor{Name: comp}}
	if chunk == nil {
		m.Format, m.ChunkShape, m.ShardShape = 2, shard, nil
	}
	ctx := context.Background()
	z, err := zarr.Create(ctx, zarr.NewDirStore(path), "", m)
	if err != nil {
		t.Fatal(err)
	}
	if err := z.WriteRegion(ctx, make([]int, len(a.Shape)), a); err != nil {
		t.Fatal(err)
	}
}

// readZarrOutput reads the whole Zarr array at path.
func readZarrOutput(t *testing.T, path string) nd.Array {
	t.Helper()
	ctx := context.Background()
	z, err := zarr.Open(ctx, zarr.NewDirStore(path), "")
	if err != nil {
		t.Fatal(err)
	}
	a, err := z.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestBlocksEqualWhole: a Zarr output written in N-D blocks (tiny shards,
// tiny block budgets, several in flight, from a Zarr input and from a
// .npy one) holds the bytes of the whole-volume .npy output, for random
// shapes, kernels, borders (wrap included), modes, origins, dtypes and
// banks.
func TestBlocksEqualWhole(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(30, 5))
	borders := []string{"reflect", "constant", "nearest", "mirror", "wrap"}
	modes := []string{"same", "same", "valid", "full"}
	dtypes := []nd.DType{nd.Float32, nd.Float64, nd.Uint8, nd.Int16}
	n := blockCases()
	blocks := 0
	for i := range n {
		rank := 1 + rng.IntN(3)
		shape, shard, chunk := make([]int, rank), make([]int, rank), make([]int, rank)
		kshape := make([]string, rank)
		for d := range rank {
			shape[d] = 1 + rng.IntN(13)
			chunk[d] = 1 + rng.IntN(3)
			shard[d] = chunk[d] * (1 + rng.IntN(3))
			kshape[d] = strconv.Itoa(1 + rng.IntN(min(5, 2*shape[d]+1)))
		}
		dt := dtypes[rng.IntN(len(dtypes))]
		src := enginetest.RandomArray(rng, dt, shape...)
		in := filepath.Join(dir, fmt.Sprintf("in%d", i))
		writeNPY(t, in+".npy", src)
		sharded := rng.IntN(2) == 0
		if sharded {
			writeZarrInput(t, in+".zarr", src, shard, chunk, "zstd")
		} else {
			writeZarrInput(t, in+".zarr", src, shard, nil, []string{"", "zstd", "blosc"}[rng.IntN(3)])
		}
		// Kernels: one or two (a bank), of random weights.
		var args []string
		for k := range 1 + rng.IntN(2) {
			ks := make([]int, rank)
			for d := range rank {
				ks[d], _ = strconv.Atoi(kshape[d])
			}
			kpath := filepath.Join(dir, fmt.Sprintf("k%d-%d.npy", i, k))
			writeNPY(t, kpath, enginetest.RandomArray(rng, nd.Float64, ks...))
			args = append(args, "-k", kpath)
		}
		border, mode := borders[rng.IntN(len(borders))], modes[rng.IntN(len(modes))]
		args = append(args, "--border", border, "--mode", mode, "--cval", "1.5", "-q")
		if mode == "same" && rng.IntN(3) == 0 {
			args = append(args, "--origin", strconv.Itoa(rng.IntN(3)-1))
		}
		if rng.IntN(3) == 0 {
			args = append(args, "--dtype", "float64")
		}
		op := []string{"correlate", "convolve"}[rng.IntN(2)]
		whole := filepath.Join(dir, fmt.Sprintf("whole%d.npy", i))
		what := fmt.Sprintf("case %d: %s %v %v shards %v chunks %v sharded %v %s", i, op, dt, shape, shard, chunk, sharded, strings.Join(args, " "))
		code, _, lines := cliRun(append([]string{op, in + ".npy", whole}, args...)...)
		if code != 0 {
			// An input the problem refuses (a kernel larger than a valid
			// output) must be refused in blocks too.
			code2, _, lines2 := cliRun(append([]string{op, in + ".zarr", filepath.Join(dir, fmt.Sprintf("refused%d.zarr", i))}, args...)...)
			if code2 == 0 {
				t.Fatalf("%s: whole failed (%v), blocks did not", what, lines)
			}
			_ = lines2
			continue
		}
		want, _, err := imageio.ReadFile(whole, imageio.RawOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("NDCONV_BLOCK_BYTES", strconv.Itoa(1+rng.IntN(4096)))
		t.Setenv("NDCONV_BLOCKS_IN_FLIGHT", strconv.Itoa(1+rng.IntN(4)))
		t.Setenv("NDCONV_BLOCK_CACHE", strconv.Itoa(rng.IntN(2048)))
		for _, from := range []string{in + ".zarr", in + ".npy"} {
			out := filepath.Join(dir, fmt.Sprintf("out%d-%s.zarr", i, filepath.Ext(from)[1:]))
			code, _, lines := cliRun(append([]string{op, from, out}, args...)...)
			if code != 0 {
				t.Fatalf("%s from %s: exit %d: %v", what, from, code, lines)
			}
			got := readZarrOutput(t, out)
			if got.DType() != want.DType() || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) || !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("%s from %s: blocks differ from the whole output (%v %v vs %v %v)", what, from, got.DType(), got.Shape, want.DType(), want.Shape)
			}
			blocks++
		}
		os.Unsetenv("NDCONV_BLOCK_BYTES")
		os.Unsetenv("NDCONV_BLOCKS_IN_FLIGHT")
		os.Unsetenv("NDCONV_BLOCK_CACHE")
	}
	t.Logf("%d random jobs, %d outputs in blocks equal to the whole ones", n, blocks)
}
