package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/job"
	"github.com/ndconv/ndconv/nd"
)

// Blocks: a job whose output is Zarr, from a Zarr input or a .npy/.raw one
// that can be mapped, runs in N-D blocks (package job: the same block
// function as ndconv worker and the other engines) aligned with the
// output's shards, so that each shard is written whole, once, and host
// memory holds the blocks in flight whatever the volume. The output's
// metadata is written first; an interrupted run leaves whole shards and
// consistent metadata, and --resume skips the blocks whose shards are all
// stored. A volume that fits one block is one block: the same work as
// reading whole, so Zarr always takes this path.
//
// NDCONV_BLOCK_BYTES bounds a block's input and output (default
// job.DefaultBlockBytes, raised where one shard's block needs more),
// NDCONV_BLOCK_CACHE the bytes of a Zarr input's chunks kept decoded
// (job.ChunkCache; default: room for the chunks that wait for a later
// block, 384 MiB to 1 GiB) and NDCONV_BLOCKS_IN_FLIGHT the blocks
// computed at once (default ndconv.DefaultInFlight), for tests and
// tuning. The cache's default decodes each chunk once on a 1024³
// float32 Zarr of 128³ chunks on this 2-core machine (1.2 GB resident)
// and 1.04 times on a 2048³ uint8 one of 1 MiB chunks on 64 cores
// (docs/perf/streaming.md, session 34); the blocks in flight were chosen
// on a 64-core host, where two of them left a GPU
// waiting on the host (2048³ uint8 on one GPU: 51.4 s with 2, 7.6 s with
// 16).

// blockable reports whether the job runs in blocks: a Zarr output, from a
// Zarr input or a .npy or .raw file.
func blockable(job filterJob) bool {
	if !imageio.IsZarr(job.output) {
		return false
	}
	if imageio.IsZarr(job.input) {
		return true
	}
	ext := strings.ToLower(filepath.Ext(job.input))
	return ext == ".npy" || ext == ".raw"
}

// runBlocks carries out a job in N-D blocks. It reports false, having
// done nothing, where the input cannot be mapped or the filters cannot run
// in blocks (filters of several terms): the caller then reads the input
// whole.
func runBlocks(cmd *cobra.Command, fj filterJob, specs []kernelSpec) (bool, error) {
	begin := time.Now()
	ctx, cancel := context.WithCancelCause(cmd.Context())
	defer cancel(nil)
	stats := &job.Stats{}
	progress := newProgress(cmd.ErrOrStderr(), fj.op.String(), fj.quiet)
	if progress != nil {
		progress.describe = func() string {
			return fmt.Sprintf("%s in, %s out", gigabytes(stats.In.Load()), gigabytes(stats.Out.Load()))
		}
	}
	opt := fj.opt
	opt.Progress = testHookProgress(progress.reporter())
	spec, err := job.New(ctx, job.Config{Op: fj.op, Input: fj.input, Output: fj.output, Raw: fj.raw,
		Filters: func(rank int) ([]filters.Filter, error) { return buildFilters(specs, rank) },
		Options: opt, BlockBytes: streamSetting("NDCONV_BLOCK_BYTES", job.DefaultBlockBytes)})
	if errors.Is(err, job.ErrNotBlockable) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	defer spec.Close()
	outDType, _ := nd.ParseDType(spec.OutputDType)
	if err := imageio.CheckDType(fj.output, outDType); err != nil {
		return true, &usageError{err}
	}
	// The output array, metadata first; --resume and --part keep one of
	// the same layout with its shards.
	mode := job.Replace
	if fj.resume {
		mode = job.KeepLayout
	}
	if err := spec.CreateWith(ctx, mode); err != nil {
		return true, err
	}
	// One device where no list was given (--device cpu, cuda): two blocks
	// at least, so that one is read or written while the other computes
	// (on two cores 1 in flight took 11.0–11.5 s against 8.8–10.6 for a
	// 1024³ float32 Zarr of zarr-python's default codec, 5³; session 41).
	inFlight := blocksInFlight(max(1, len(fj.deviceList)))
	o := job.RunOptions{InFlight: inFlight, Devices: fj.devices, CacheBytes: streamSetting("NDCONV_BLOCK_CACHE", 0),
		Stats: stats, AnyPlan: true, Before: func() { testHookPanic("sink") }}
	if n := testHookCancelBlocks(); n > 0 {
		o.After = func(done int64) {
			if done == int64(n) {
				cancel(fmt.Errorf("testhook: cancelled after %d blocks", n))
			}
		}
	} else if tracing {
		// The first block, then every eighth: a run's start-up, steady
		// rate and tail.
		o.After = func(done int64) {
			if done == 1 || done%8 == 0 {
				trace(fmt.Sprintf("%d blocks done", done))
			}
		}
	}
	r, err := spec.OpenWith(ctx, o)
	if err != nil {
		return true, err
	}
	defer r.Close()
	p := r.Plan()
	trace("planned on " + p.Device())
	limitMemory(spec, inFlight, r.Cache())
	testHookStage("blocks")
	if fj.parts > 0 {
		err = r.RunShare(ctx, fj.part, fj.parts)
	} else {
		err = r.RunAll(ctx)
	}
	progress.finish()
	if err != nil {
		if c := context.Cause(ctx); c != nil && cmd.Context().Err() == nil {
			return true, c // the test hook's cancellation
		}
		return true, err
	}
	trace("blocks done")
	if c := r.Cache(); c != nil {
		trace(fmt.Sprintf("%d chunks decoded (%d in the array), %d reads from the cache (budget %d MiB)", c.Decoded(), c.Chunks(), c.Hits(), c.Budget()>>20))
	}
	if !fj.quiet {
		wall := time.Since(begin)
		resumed := ""
		if fj.resume {
			resumed = fmt.Sprintf(", %d stored already", stats.Skipped.Load())
		}
		device := p.Device() // the plan's: the first of a list
		if len(fj.deviceList) > 1 {
			names := make([]string, len(fj.deviceList))
			for i, d := range fj.deviceList {
				names[i] = d.String()
			}
			device = strings.Join(names, ",")
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s %s %v -> %s %v %v: %s on %s, %d blocks of %v (%d in flight%s), %.1f ms; "+
			"in %s (%.2f GB/s), out %s (%.2f GB/s); read+decode %.1f s, compute %.1f s, encode+write %.1f s (summed over the blocks in flight)%s\n",
			fj.op, spec.InputDType, spec.InputShape, filepath.Base(fj.output), p.DType(), p.Shape(), p.Method(), device,
			spec.Blocks(), spec.Block, inFlight, resumed, ms(wall),
			gigabytes(stats.In.Load()), rate(stats.In.Load(), wall), gigabytes(stats.Out.Load()), rate(stats.Out.Load(), wall),
			seconds(stats.Read.Load()), seconds(stats.Compute.Load()), seconds(stats.Write.Load()), choiceNote(p))
	}
	return true, nil
}

// blocksInFlight is NDCONV_BLOCKS_IN_FLIGHT, or ndconv.DefaultInFlight.
func blocksInFlight(ndevices int) int {
	return int(streamSetting("NDCONV_BLOCKS_IN_FLIGHT", int64(ndconv.DefaultInFlight(ndevices))))
}

// limitMemory sets the garbage collector's target near what the blocks
// in flight and the cache hold, unless GOMEMLIMIT is set: the garbage of
// each block (decoded chunks, encoded shards) would let the heap grow to
// twice what it holds before a collection.
func limitMemory(spec *job.Spec, inFlight int, cache *job.ChunkCache) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	held := int64(inFlight) * spec.BlockBytes()
	if cache != nil {
		held += cache.Budget()
	}
	debug.SetMemoryLimit(held + held/2 + 256<<20)
}

// workerGC is the garbage collector's percentage for ndconv worker (unless
// GOGC is set): a worker is a short process, so every page its heap
// grows to is a fresh page the kernel faults in and clears, and its heap
// is mostly pointer-free buffers that a collection does not scan. At 50
// (the heap grows half its live size between collections, not all of
// it) one of 8 workers of a 512³ job faulted 25% fewer pages and spent
// 8–10% less CPU than at Go's 100 (docs/perf/jobs.md).
const workerGC = 50

func setWorkerGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(workerGC)
	}
}

func gigabytes(n int64) string { return fmt.Sprintf("%.2f GB", float64(n)/1e9) }

func rate(n int64, d time.Duration) float64 { return float64(n) / 1e9 / max(d.Seconds(), 1e-9) }

func seconds(ns int64) float64 { return float64(ns) / 1e9 }
