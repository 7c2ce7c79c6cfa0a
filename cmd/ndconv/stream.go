package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

// Streaming: a .npy or .raw input of streamThreshold bytes or more, filtered
// into a .npy or .raw output, is read through a memory map and written
// chunk by chunk (package chunk, through ndconv's ExecuteChunks), so host
// memory holds about one chunk of input and output however large the
// files. NDCONV_STREAM_THRESHOLD and NDCONV_STREAM_CHUNK (bytes) override
// the threshold and the chunk size, for tests and for tuning.
//
// Streaming is faster than reading whole well below the sizes that need
// it: reading whole writes every page of a fresh input buffer and output
// first (the H100 host read a 256 MiB .npy in 206 ms that cat copies in 99;
// the 2-core VM in 0.85–1.07 s). 8192² float32 7×7 on the VM: 2.2–2.4 s
// read whole, 0.59–0.84 s streamed, the same bytes, 180 MB resident
// instead of 540. Below 64 MiB a whole read costs little.
const (
	defaultStreamThreshold = 64 << 20
	defaultStreamChunk     = 64 << 20
)

func streamSetting(name string, def int64) int64 {
	if n, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil && n > 0 {
		return n
	}
	return def
}

// streamable reports whether the job's files allow streaming and the input
// is large enough to want it.
func streamable(job filterJob) bool {
	if job.opt.BankLayout == ndconv.Planar {
		return false // the chunks are runs of the interleaved output
	}
	for _, path := range []string{job.input, job.output} {
		ext := strings.ToLower(filepath.Ext(path))
		if ext != ".npy" && ext != ".raw" {
			return false
		}
	}
	fi, err := os.Stat(job.input)
	return err == nil && fi.Mode().IsRegular() && fi.Size() >= streamSetting("NDCONV_STREAM_THRESHOLD", defaultStreamThreshold)
}

// runStreamed carries out a job chunk by chunk (filters of several terms,
// such as gradient-magnitude, too). It reports false, having done
// nothing, when the input's data cannot be mapped (another byte order,
// Fortran order) or the plan cannot run in chunks: the caller then reads
// the input whole.
func runStreamed(cmd *cobra.Command, job filterJob, specs []kernelSpec) (bool, error) {
	start := time.Now()
	src, err := imageio.MapFile(job.input, job.raw)
	if errors.Is(err, imageio.ErrNotMappable) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	defer src.Close()
	fs, err := buildFilters(specs, spatialAxes(&job.opt, specs, src.Array, imageio.Meta{}))
	if err != nil {
		return true, err
	}
	progress := newProgress(cmd.ErrOrStderr(), job.op.String(), job.quiet)
	job.opt.Progress = testHookProgress(progress.reporter())
	p, err := ndconv.NewFilterPlan(job.op, src.Shape, src.DType(), job.opt, fs...)
	if err != nil {
		return true, err
	}
	if !p.Chunked() {
		return false, nil
	}
	trace("mapped, planned on " + p.Device())
	chunks := 0
	// Both callbacks turn a panic into an error, so that the writer removes
	// its temporary file: the sink runs on the library's writer goroutine,
	// where a panic would end the process at once.
	err = imageio.WriteFileChunks(job.output, p.DType(), p.Shape(), func(write func(nd.Array) error) (err error) {
		defer nd.RecoverPanic(&err)
		testHookPanic("streaming")
		return p.ExecuteChunks(cmd.Context(), src.Array, streamSetting("NDCONV_STREAM_CHUNK", defaultStreamChunk), func(_ int, out ndconv.Array) (err error) {
			defer nd.RecoverPanic(&err)
			testHookPanic("sink")
			chunks++
			trace(fmt.Sprintf("chunk %d computed", chunks))
			// The pages this chunk read need not stay resident.
			src.Release()
			err = write(out)
			trace(fmt.Sprintf("chunk %d written", chunks))
			return err
		})
	})
	progress.finish()
	if err != nil {
		return true, err
	}
	trace("streamed")
	if !job.quiet {
		fmt.Fprintf(cmd.OutOrStdout(), "%s %v %v -> %s %v %v: %s on %s, streamed in %d chunks, %.1f ms%s\n",
			job.op, src.DType(), src.Shape, filepath.Base(job.output), p.DType(), p.Shape(), p.Method(), p.Device(),
			chunks, ms(time.Since(start)), choiceNote(p))
	}
	return true, nil
}
