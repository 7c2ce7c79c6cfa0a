package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

// Many inputs in one call (--out-dir): each file is read, filtered and
// written exactly as a one-file call does it (computeArray, writeOutput),
// through a pipeline (runPipeline) that overlaps one file's read, another's
// computation and a third's write. The device is opened once for the run
// and one plan is kept per distinct input shape, dtype and channel count,
// so a folder of like files plans (and compiles GPU kernels) once.

// manyInput is one input of a many-file run and where its output goes.
type manyInput struct {
	path   string // as found: the argument, or joined under it
	dir    string // the directory under the argument's directory ("" for a file argument)
	output string
}

// outNameFields are the fields an --out-name template may hold.
var outNameFields = []string{"{stem}", "{ext}", "{name}", "{dir}", "{i}"}

// checkOutName refuses a template with an unknown field or none at all.
func checkOutName(tmpl string) error {
	rest := tmpl
	for _, f := range outNameFields {
		rest = strings.ReplaceAll(rest, f, "")
	}
	if strings.ContainsAny(rest, "{}") {
		return usagef("--out-name %q: the fields are %s", tmpl, strings.Join(outNameFields, " "))
	}
	if strings.TrimSpace(tmpl) == "" {
		return usagef("--out-name is empty")
	}
	return nil
}

// splitExt splits a file name into stem and extension (with its dot),
// taking .nii.gz whole.
func splitExt(name string) (stem, ext string) {
	if strings.HasSuffix(strings.ToLower(name), ".nii.gz") && len(name) > len(".nii.gz") {
		return name[:len(name)-len(".nii.gz")], name[len(name)-len(".nii.gz"):]
	}
	ext = filepath.Ext(name)
	return strings.TrimSuffix(name, ext), ext
}

// outputName expands the template for input i. A template without {dir}
// is placed under the input's relative directory, so that --recursive keeps
// the tree.
func outputName(tmpl, outDir string, i int, in manyInput) string {
	name := filepath.Base(in.path)
	stem, ext := splitExt(name)
	dir := filepath.ToSlash(in.dir)
	s := strings.NewReplacer("{stem}", stem, "{ext}", ext, "{name}", name, "{dir}", dir, "{i}", strconv.Itoa(i)).Replace(tmpl)
	if !strings.Contains(tmpl, "{dir}") {
		s = filepath.Join(in.dir, s)
	}
	return filepath.Join(outDir, filepath.FromSlash(s))
}

// knownFormat reports whether path's extension names a format ndconv reads
// and writes.
func knownFormat(path string) bool { return imageio.CheckDType(path, nd.Uint8) == nil }

// collectInputs expands the arguments: a file is taken as it is (a missing
// one fails when it is read, as one file in the run); a directory gives its
// entries with a known extension, in name order, that are not directories
// (a dangling link is taken and fails when read), and with recursive those
// of its subdirectories, the output directory's tree excepted. Symbolic
// links to directories are not followed.
func collectInputs(args []string, recursive bool, outDir string) ([]manyInput, error) {
	absOut, _ := filepath.Abs(outDir)
	var ins []manyInput
	for _, arg := range args {
		fi, err := os.Stat(arg)
		if err != nil && strings.ContainsAny(arg, "*?[") {
			// A pattern the shell did not expand (quoted, or too many
			// files for one command line).
			matches, err := filepath.Glob(arg)
			if err != nil {
				return nil, usagef("%s: %v", arg, err)
			}
			if len(matches) == 0 {
				return nil, usagef("%s: no file matches", arg)
			}
			for _, m := range matches {
				if fi, err := os.Stat(m); (err != nil || !fi.IsDir()) && knownFormat(m) {
					ins = append(ins, manyInput{path: m})
				}
			}
			continue
		}
		if err != nil || !fi.IsDir() {
			if !knownFormat(arg) {
				return nil, usagef("%s: not a file format ndconv reads (by its extension)", arg)
			}
			ins = append(ins, manyInput{path: arg})
			continue
		}
		err = filepath.WalkDir(arg, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path == arg {
					return nil
				}
				if abs, _ := filepath.Abs(path); !recursive || abs == absOut {
					return filepath.SkipDir
				}
				return nil
			}
			if !knownFormat(path) {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				if fi, err := os.Stat(path); err == nil && fi.IsDir() {
					return nil
				}
			}
			rel, err := filepath.Rel(arg, filepath.Dir(path))
			if err != nil || rel == "." {
				rel = ""
			}
			ins = append(ins, manyInput{path: path, dir: rel})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("input directory %s: %w", arg, err)
		}
	}
	return ins, nil
}

// runMany carries out a job of many inputs (--out-dir).
func runMany(cmd *cobra.Command, job filterJob) error {
	specs, err := parseSpecs(job)
	if err != nil {
		return err
	}
	if job.ceiling {
		specs = nil // nothing is filtered
	}
	args := job.inputs
	if job.from != "" {
		listed, err := readInputList(cmd, job.from)
		if err != nil {
			return err
		}
		args = append(slices.Clip(args), listed...)
	}
	ins, err := collectInputs(args, job.recursive, job.outDir)
	if err != nil {
		return err
	}
	if len(ins) == 0 {
		return usagef("no input files in %s", strings.Join(args, " "))
	}
	// Refuse, before any work, names that clash or overwrite an input, and
	// an output format not known.
	byOutput := map[string]string{}
	anyRaw := false
	for i := range ins {
		in := &ins[i]
		in.output = outputName(job.outName, job.outDir, i, *in)
		if !knownFormat(in.output) {
			return usagef("--out-name %q: output %s has no known format extension", job.outName, in.output)
		}
		absOut, _ := filepath.Abs(in.output)
		absIn, _ := filepath.Abs(in.path)
		if absOut == absIn {
			return usagef("%s: the output would overwrite its input; choose another --out-dir or --out-name", in.path)
		}
		if prev, ok := byOutput[absOut]; ok {
			return usagef("%s and %s would both be written to %s; use {dir} or {i} in --out-name", prev, in.path, in.output)
		}
		byOutput[absOut] = in.path
		anyRaw = anyRaw || strings.EqualFold(filepath.Ext(in.path), ".raw")
	}
	if job.rawFlags && !anyRaw {
		return usagef("--shape and --input-dtype are for .raw inputs, and none is given")
	}
	// Each file allocates its arrays and codec buffers afresh and drops
	// them, over a small live heap: at Go's default GOGC of 100 the
	// collector runs every few files. 400 took 7–10% less CPU for 2,000
	// 512² PNGs with a 7×7 kernel (2-core machine: 21.9–23.5 s instead of
	// 24.8–25.2 s) for 150 MB resident instead of 87. GOGC, where set,
	// decides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// The device is opened once, while the first file is read, and held
	// for the run, as a one-file call holds it.
	prewarm(job.opt.Device, ins[0].path)
	ctx := cmd.Context()
	start := time.Now()
	sum := runPipeline(ctx, cmd, job, specs, ins)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	secs := time.Since(start).Seconds()
	if !job.quiet {
		done := len(ins) - sum.failed - sum.skipped
		what := job.op.String()
		if job.ceiling {
			what = "ceiling"
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %d files, %d failed, %d skipped, %.2f s, %.1f files/s, %.1f MB/s in, %.1f MB/s out; read %.2f s, compute %.2f s, write %.2f s (each summed over files; they overlap)\n",
			what, len(ins), sum.failed, sum.skipped, secs, float64(done)/max(secs, 1e-9),
			float64(sum.bytesIn)/1e6/max(secs, 1e-9), float64(sum.bytesOut)/1e6/max(secs, 1e-9),
			sum.read.Seconds(), sum.compute.Seconds(), sum.write.Seconds())
		if sum.gpu.executions > 0 {
			fmt.Fprintf(cmd.OutOrStdout(), "  %v\n", sum.gpu)
		}
	}
	if sum.failed > 0 {
		return fmt.Errorf("%d of %d files failed", sum.failed, len(ins))
	}
	return nil
}

// A many-file run is a pipeline of three stages, each working on several
// files at once (runPipeline says how many): reading and decoding the
// next files, computing the ones read and encoding and writing the ones
// computed overlap, so that a folder runs at the pace of its slowest stage,
// with the files in flight bounding the memory. Files leave the pipeline
// in order, and their failures are reported in order, by name.

// manyItem is one input on its way through the pipeline.
type manyItem struct {
	in       manyInput
	src, out ndconv.Array
	meta     imageio.Meta
	err      error // the first failure, which the later stages pass on
	skipped  bool  // --skip-existing: its output exists
	streamed bool  // filtered whole by the compute stage (runStreamed)
	late     bool  // reached or left the compute stage after a stop: not written

	read, compute, write time.Duration
}

// manySummary tallies a run.
type manySummary struct {
	failed, skipped      int
	bytesIn, bytesOut    int64
	read, compute, write time.Duration
	gpu                  gpuUse
}

// runPipeline runs the inputs through the three stages and reports each
// failure on standard error. A signal (ctx) stops reading and computing;
// files already computed are still written whole. --fail-fast stops the
// run at the first failure.
func runPipeline(ctx context.Context, cmd *cobra.Command, job filterJob, specs []kernelSpec, ins []manyInput) manySummary {
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	// Decoding and encoding take one core a file (a PNG's inflate and
	// deflate are one stream), so several files are read and several
	// written at once, up to one a core in each stage: the stages' costs
	// differ from file to file and format to format (a 512² PNG decodes in
	// ~3.5 ms and encodes in 1.3–2.2), and with half the cores each the
	// heavier stage bounded the run with cores idle. The Go scheduler
	// shares the cores among the stages' goroutines. The computation on
	// the CPU takes up to half the cores, one file a core (computePlans);
	// on a GPU its slots only wait for the device, and as many files wait
	// as one bank takes.
	procs := runtime.GOMAXPROCS(0)
	workers := max(1, procs/2)
	codecs, slots := procs, workers
	if dev, err := ndconv.ParseDevice(job.opt.Device); err == nil && dev.GPU() {
		slots = max(slots, maxBank)
	}
	// NDCONV_MANY_CODECS and NDCONV_MANY_SLOTS set the files in flight in
	// the read and write stages and in the compute stage (measurements).
	codecs = int(streamSetting("NDCONV_MANY_CODECS", int64(codecs)))
	slots = int(streamSetting("NDCONV_MANY_SLOTS", int64(slots)))
	inputs := make(chan manyInput)
	go func() {
		defer close(inputs)
		for _, in := range ins {
			select {
			case inputs <- in:
			case <-stop.Done():
				return
			}
		}
	}()
	read := ordered(inputs, codecs, func(in manyInput) manyItem { return readItem(stop, job, in) })
	computed := make(chan manyItem)
	var cp *computePlans // read once written is drained: the compute stage has closed it
	go func() {          // compute: up to workers files at once (computePlans)
		defer close(computed)
		cp = newComputePlans(job, workers)
		defer cp.close()
		results := ordered(read, slots, func(it manyItem) manyItem {
			if stop.Err() != nil {
				it.late = true // read after a stop: dropped
				return it
			}
			if it.err == nil && !it.skipped {
				computeItem(stop, cmd, job, specs, &it, cp)
			}
			return it
		})
		defer func() {
			for range results { // what was read after a stop: dropped
			}
		}()
		for it := range results {
			if it.late {
				// Finished (or read) after a signal: dropped. Files that
				// finished before it are still written, whatever their
				// place in the order: the compute workers take files as
				// their plans come free, not in order.
				continue
			}
			computed <- it
			if it.err != nil && job.failFast {
				return // nothing after the first failure is computed or written
			}
		}
	}()
	written := ordered(computed, codecs, func(it manyItem) manyItem {
		if it.err == nil && !it.skipped && !it.streamed {
			// A computed file is written whole even after a signal.
			job := job
			job.output = it.in.output
			it.write, it.err = writeOutput(context.WithoutCancel(ctx), job, it.out, it.meta)
		}
		return it
	})
	var sum manySummary
	stderr := cmd.ErrOrStderr()
	failedFast := false
	for it := range written { // in order
		if failedFast {
			continue // --fail-fast: nothing after the first failure counts
		}
		sum.read, sum.compute, sum.write = sum.read+it.read, sum.compute+it.compute, sum.write+it.write
		switch {
		case it.skipped:
			sum.skipped++
		case it.err != nil && ctx.Err() == nil: // the signal's line is run's to print
			sum.failed++
			msg := it.err.Error()
			if !strings.Contains(msg, it.in.path) {
				msg = it.in.path + ": " + msg
			}
			fmt.Fprintln(stderr, "ndconv:", oneLine.Replace(msg))
			if job.failFast {
				failedFast = true
				cancel()
			}
		case it.err == nil && !it.streamed:
			sum.bytesIn += int64(len(it.src.Bytes()))
			sum.bytesOut += int64(len(it.out.Bytes()))
		}
	}
	if cp != nil {
		sum.gpu = cp.gpu
	}
	return sum
}

// ordered runs fn on what comes from in, up to n at once, and delivers the
// results in the order of in; at most n are in flight beside the one being
// delivered. The caller drains the result.
func ordered[T, U any](in <-chan T, n int, fn func(T) U) <-chan U {
	futures := make(chan chan U, n)
	go func() {
		defer close(futures)
		for t := range in {
			f := make(chan U, 1)
			futures <- f
			go func() { f <- fn(t) }()
		}
	}()
	out := make(chan U)
	go func() {
		defer close(out)
		for f := range futures {
			out <- <-f
		}
	}()
	return out
}

// readItem is the read stage's work on one input: its output's directory
// made and checked, and the input read and decoded — unless its output
// exists under --skip-existing, or it streams (the compute stage then
// reads it in pieces).
func readItem(ctx context.Context, job filterJob, in manyInput) manyItem {
	it := manyItem{in: in}
	if job.skipExisting {
		if _, err := os.Lstat(in.output); err == nil {
			it.skipped = true
			return it
		}
	}
	if it.err = os.MkdirAll(filepath.Dir(in.output), 0o755); it.err != nil {
		return it
	}
	if it.err = imageio.CheckWritable(in.output); it.err != nil {
		return it
	}
	job.input, job.output = in.path, in.output
	if !job.ceiling && streamable(job) {
		it.streamed = true
		return it
	}
	start := time.Now()
	it.src, it.meta, it.err = readInput(ctx, in.path, job.raw)
	it.read = time.Since(start)
	return it
}

// computeItem is the compute stage's work on one input: filtered with a
// plan from cp, or, for an input that streams, read, filtered and written
// in pieces as a one-file call does (one such file at a time: each takes
// every core and its chunks' memory).
func computeItem(ctx context.Context, cmd *cobra.Command, job filterJob, specs []kernelSpec, it *manyItem, cp *computePlans) {
	job.input, job.output, job.quiet = it.in.path, it.in.output, true
	if it.streamed {
		cp.serial.Lock()
		start := time.Now()
		done, err := runStreamed(cmd, job, specs)
		it.compute = time.Since(start)
		cp.serial.Unlock()
		if done {
			it.err = err
			return
		}
		// Not streamed after all: read whole, here.
		it.streamed = false
		rs := time.Now()
		if it.src, it.meta, it.err = readInput(ctx, it.in.path, job.raw); it.err != nil {
			return
		}
		it.read = time.Since(rs)
	}
	if job.ceiling {
		it.out, it.late = it.src, ctx.Err() != nil // --ceiling: written as read
		return
	}
	start := time.Now()
	var release func()
	var execute func(context.Context, *ndconv.FilterPlan, ndconv.Array) (ndconv.Array, error)
	it.out, _, it.err = computeArrayWith(ctx, job, specs, it.src, it.meta, nil, func(opt ndconv.Options, fs []filters.Filter) (*ndconv.FilterPlan, error) {
		p, rel, banked, err := cp.plan(job, opt, fs, it.src, it.meta)
		release, execute = rel, banked
		return p, err
	}, func(ctx context.Context, p *ndconv.FilterPlan, src ndconv.Array) (ndconv.Array, error) {
		if execute != nil {
			return execute(ctx, p, src)
		}
		return p.Execute(ctx, src)
	})
	// Finished after a signal: not written, as a one-file call would not.
	// One finished before it is written whole, whenever its turn comes.
	// (Told before the plan is given back, and so before the next file's
	// computation starts.)
	it.late = ctx.Err() != nil
	if release != nil {
		release()
	}
	it.compute = time.Since(start)
}

// computePlans holds a many-file run's plans. The first file of a shape,
// dtype and channel count makes the run's plan for them, with the job's
// options, as a one-file call would. Where that plan runs on the CPU and
// the file is small, the files of that kind are then computed each on one
// core, with a plan of its worker's own (the same method on the same
// device, so the same bits), as many at once as the pipeline reads: a
// plan's executions take turns, and a small image split over every core
// spends more on starting and joining the cores, which the decoders and
// encoders are using, than on the work (a 512² PNG with a 7×7 kernel on
// the 2-core machine: 2.3 ms a file on one core, 11–23 ms on both). Where
// it runs on a GPU and the file is small, the files of that kind waiting
// for the device when it comes free go to it together, as one bank
// (executeBanked). A large file runs alone with the run's plan on every
// core or the device.
type computePlans struct {
	mu      sync.Mutex
	main    map[string]*ndconv.FilterPlan
	free    chan map[string]*ndconv.FilterPlan // the workers' own plans, one map a worker
	all     []map[string]*ndconv.FilterPlan
	serial  sync.Mutex // held by a file, or a bank, that runs alone
	workers int

	// The GPU's banks: the files waiting per kind (mu), and the plans for
	// banks of n files of a kind, n a power of two (serial).
	waiting map[string][]*bankRequest
	banks   map[string]*ndconv.FilterPlan
	bankIn  map[*ndconv.FilterPlan]ndconv.Array // each bank plan's input, reused (under serial)
	noBank  map[string]bool                     // kinds whose bank plans are not the run's plan's method
	// bankFileMax is the largest file a GPU banks with others
	// (bankFileMaxBytes, or NDCONV_MANY_BANK_BYTES for measurements: 1
	// runs every file alone; tests lower it).
	bankFileMax int
	bankCPU     bool // tests: bank on the CPU too

	alone map[string]*alonePool // under mu

	gpu gpuUse // under mu
}

// gpuUse is what a run's files took of a GPU: the time its executions
// took, summed (the host's copies to and from the device included; files
// run alone overlap, banks do not), and how many executions carried how
// many files. A run whose device is the bound shows busy close to its
// wall time.
type gpuUse struct {
	held              time.Duration
	executions, files int
}

func (u gpuUse) String() string {
	return fmt.Sprintf("GPU executions %.2f s summed, %d of %.1f files each", u.held.Seconds(), u.executions, float64(u.files)/float64(max(1, u.executions)))
}

// concurrentMaxBytes is the largest input computed on one core beside
// others, or banked with others on a GPU (16 MiB: a 2048² RGBA image, a
// 128³ float64 volume); a larger one is split over every core, or goes to
// the device alone. 200 .npy volumes of 128³ float32 (8 MiB) with a 5³
// kernel on the 2-core machine: 8.4–12.2 s and 8.1–8.8 CPU-s on one core
// each, 15.6–15.9 s and 9.1–9.5 CPU-s split over both.
const concurrentMaxBytes = 16 << 20

// maxBank is the most files in one bank on a GPU, and maxBankBytes the
// most input bytes: a bank of 64 512² uint8 images with a 7×7 kernel took
// 0.22–0.30 ms an image on the H200 host's CUDA, one image alone 1.7–2.5
// ms (a one-file call's) and ~0.76 ms (in a folder run, one at a time);
// past 16 a bank saves little more, and holds more memory.
const (
	maxBank      = 16
	maxBankBytes = 64 << 20
)

func newComputePlans(job filterJob, workers int) *computePlans {
	cp := &computePlans{main: map[string]*ndconv.FilterPlan{}, workers: workers, free: make(chan map[string]*ndconv.FilterPlan, workers),
		waiting: map[string][]*bankRequest{}, banks: map[string]*ndconv.FilterPlan{}, bankIn: map[*ndconv.FilterPlan]ndconv.Array{},
		noBank: map[string]bool{}, alone: map[string]*alonePool{}, bankFileMax: testHookBankFileMax(int(streamSetting("NDCONV_MANY_BANK_BYTES", bankFileMaxBytes))),
		bankCPU: testHookBankCPU()}
	if job.opt.Workers > 0 {
		cp.workers = min(workers, job.opt.Workers) // --workers N: N cores for the computation
	}
	cp.workers = max(cp.workers, 1)
	for range cp.workers {
		m := map[string]*ndconv.FilterPlan{}
		cp.all = append(cp.all, m)
		cp.free <- m
	}
	return cp
}

// plan returns the plan for src, the function that gives it back when the
// execution is done, and, for a file banked on a GPU, the function that
// executes it.
func (cp *computePlans) plan(job filterJob, opt ndconv.Options, fs []filters.Filter, src ndconv.Array, meta imageio.Meta) (
	*ndconv.FilterPlan, func(), func(context.Context, *ndconv.FilterPlan, ndconv.Array) (ndconv.Array, error), error) {
	key := fmt.Sprint(src.Shape, src.DType(), meta.Channels)
	cp.mu.Lock()
	main := cp.main[key]
	if main == nil {
		testHookNote("plan " + key) // the tests count the plans made
		var err error
		if main, err = ndconv.NewFilterPlan(job.op, src.Shape, src.DType(), opt, fs...); err != nil {
			cp.mu.Unlock()
			return nil, nil, nil, err
		}
		cp.main[key] = main
	}
	cp.mu.Unlock()
	small := len(src.Bytes()) <= concurrentMaxBytes
	if small && (main.Device() != "cpu" || cp.bankCPU) {
		if len(src.Bytes()) > cp.bankFileMax {
			return main, nil, func(ctx context.Context, p *ndconv.FilterPlan, src ndconv.Array) (ndconv.Array, error) {
				return cp.executeAlone(ctx, job, key, p, opt, fs, src)
			}, nil
		}
		return main, nil, func(ctx context.Context, p *ndconv.FilterPlan, src ndconv.Array) (ndconv.Array, error) {
			return cp.executeBanked(ctx, job, key, p, opt, fs, src)
		}, nil
	}
	if main.Device() != "cpu" || !small {
		cp.serial.Lock()
		return main, cp.serial.Unlock, nil, nil
	}
	own := <-cp.free
	give := func() { cp.free <- own }
	if p := own[key]; p != nil {
		return p, give, nil, nil
	}
	one := opt
	one.Device, one.Workers = "cpu", 1
	if m, err := ndconv.ParseMethod(main.Method()); err == nil {
		one.Method = m // the method the run's plan chose, chosen again
	}
	p, err := ndconv.NewFilterPlan(job.op, src.Shape, src.DType(), one, fs...)
	if err != nil || p.Method() != main.Method() {
		// Not the same plan on one core: the run's plan, alone.
		if p != nil {
			p.Close()
		}
		give()
		cp.serial.Lock()
		return main, cp.serial.Unlock, nil, nil
	}
	testHookNote("one-core plan " + key)
	own[key] = p
	return p, give, nil, nil
}

// bankFileMaxBytes is the largest file a GPU banks with others. Above it a
// file's copies dwarf a launch's cost, and a bank's assembly would add a
// copy while the device is held: such a file runs alone (executeAlone).
// H100, 200 .npy volumes of 8 MiB (128³ float32, 5³): 1.28–1.34 s alone,
// 1.32–1.76 s banked by eight, one 200×128³ array 0.99–1.14 s.
const bankFileMaxBytes = 1 << 20

// executeAlone filters src, a file too large to bank, on the GPU of the
// run's plan main, its output allocated (and zeroed) before the device is
// taken, so that the execution only copies and computes. Up to aloneMax
// such files run at once, each with a plan of its own (alonePlan).
func (cp *computePlans) executeAlone(ctx context.Context, job filterJob, key string, main *ndconv.FilterPlan, opt ndconv.Options,
	fs []filters.Filter, src ndconv.Array) (ndconv.Array, error) {
	dst, err := nd.New(main.DType(), main.Shape()...)
	if err != nil {
		return ndconv.Array{}, err
	}
	testHookNote("device alone")
	p, put := cp.alonePlan(job, key, main, opt, fs, src)
	defer put()
	testHookDeviceBusy()
	start := time.Now()
	defer cp.addGPU(start, 1, 1)
	return p.ExecuteInto(ctx, dst, src)
}

// aloneMax is the most files too large to bank that run on a GPU at once.
// Each execution's host side (copying the file into pinned staging and the
// output out of it, on one core) takes longer than its transfers and
// kernels, so one at a time leaves the device mostly idle: with several,
// one file's host copies overlap another's transfers, on other cores.
const aloneMax = 3

// alonePool is a kind's plans for files run alone: the run's plan and up
// to aloneMax-1 more, made as files find them all busy.
type alonePool struct {
	free   chan *ndconv.FilterPlan
	extra  []*ndconv.FilterPlan // made here (cp.close closes them)
	made   int
	noMore bool // another plan would not be the run's plan's method
}

// alonePlan takes a plan for a file of kind key to run alone, and returns
// the function that gives it back.
func (cp *computePlans) alonePlan(job filterJob, key string, main *ndconv.FilterPlan, opt ndconv.Options, fs []filters.Filter,
	src ndconv.Array) (*ndconv.FilterPlan, func()) {
	cp.mu.Lock()
	a := cp.alone[key]
	if a == nil {
		a = &alonePool{free: make(chan *ndconv.FilterPlan, aloneMax), made: 1}
		a.free <- main
		cp.alone[key] = a
	}
	var p *ndconv.FilterPlan
	select {
	case p = <-a.free:
	default:
		if a.made < aloneMax && !a.noMore {
			a.made++
			cp.mu.Unlock()
			p = samePlan(job, main, opt, fs, src.Shape, src.DType())
			cp.mu.Lock()
			if p == nil {
				a.made--
				a.noMore = true
			} else {
				testHookNote("alone plan " + key)
				a.extra = append(a.extra, p)
			}
		}
	}
	cp.mu.Unlock()
	if p == nil {
		p = <-a.free
	}
	return p, func() { a.free <- p }
}

// samePlan makes a plan of main's filters, method and device for inputs
// of the given shape and dtype, or returns nil where it would not be
// main's method on main's device with main's output dtype (and so not the
// same bits).
func samePlan(job filterJob, main *ndconv.FilterPlan, opt ndconv.Options, fs []filters.Filter, shape []int, dt ndconv.DType) *ndconv.FilterPlan {
	if m, err := ndconv.ParseMethod(main.Method()); err == nil {
		opt.Method = m
	}
	p, err := ndconv.NewFilterPlan(job.op, shape, dt, opt, fs...)
	if err != nil || p.Method() != main.Method() || p.Device() != main.Device() || p.DType() != main.DType() {
		if p != nil {
			p.Close()
		}
		return nil
	}
	return p
}

// addGPU counts executions of files that took the device since start.
func (cp *computePlans) addGPU(start time.Time, executions, files int) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.gpu.held += time.Since(start)
	cp.gpu.executions += executions
	cp.gpu.files += files
}

// bankRequest is one file waiting for the device, with its output.
type bankRequest struct {
	src, out ndconv.Array
	err      error
	done     bool // out and err are set (under serial)
}

// executeBanked filters src, a small file of kind key, on the GPU of the
// run's plan main: the file joins the kind's files waiting for the device,
// and whichever of them gets the device takes them all (up to maxBank)
// and runs them as one array with a leading bank axis, which the kernels
// do not span, so that a bank of files costs one transfer each way and
// one launch instead of one a file — each file's output the same bits as
// alone, with the same method on the same device. A kind whose bank plan
// would differ runs its files one by one.
func (cp *computePlans) executeBanked(ctx context.Context, job filterJob, key string, main *ndconv.FilterPlan, opt ndconv.Options,
	fs []filters.Filter, src ndconv.Array) (ndconv.Array, error) {
	// The output allocated (and zeroed) here, on the file's own goroutine,
	// not while it holds the device: on the H100 host with 10,000 512²
	// PNGs the zeroing was 0.6 s of the 2.0 s the device was held, one
	// file after another. (A file that runs in a bank of several gets a
	// view of the bank's output instead.)
	out, err := nd.New(main.DType(), main.Shape()...)
	if err != nil {
		return ndconv.Array{}, err
	}
	r := &bankRequest{src: src, out: out}
	cp.mu.Lock()
	cp.waiting[key] = append(cp.waiting[key], r)
	cp.mu.Unlock()
	for {
		cp.serial.Lock()
		if r.done {
			cp.serial.Unlock()
			return r.out, r.err
		}
		cp.mu.Lock()
		q := cp.waiting[key]
		n := min(len(q), maxBank, max(1, maxBankBytes/max(1, len(src.Bytes()))))
		group := q[:n:n]
		cp.waiting[key] = q[n:]
		cp.mu.Unlock()
		for len(group) > 0 {
			m := 1 << (bits.Len(uint(len(group))) - 1) // the largest power of two in it
			cp.runBank(ctx, job, key, main, opt, fs, group[:m])
			group = group[m:]
		}
		cp.serial.Unlock()
	}
}

// runBank runs a bank of files (one: alone, with the run's plan), holding
// serial.
func (cp *computePlans) runBank(ctx context.Context, job filterJob, key string, main *ndconv.FilterPlan, opt ndconv.Options,
	fs []filters.Filter, group []*bankRequest) {
	testHookDeviceBusy()
	start := time.Now()
	var p *ndconv.FilterPlan
	if len(group) > 1 && !cp.noBank[key] {
		p = cp.bankPlan(job, key, len(group), main, opt, fs, group[0].src)
	}
	if p == nil {
		for _, r := range group {
			r.out, r.err = main.ExecuteInto(ctx, r.out, r.src)
			r.done = true
		}
		cp.addGPU(start, len(group), len(group))
		return
	}
	defer cp.addGPU(start, 1, len(group))
	// The bank's input is the plan's own, made once: nothing else holds it
	// once Execute returns.
	in, ok := cp.bankIn[p]
	var err error
	if !ok {
		if in, err = nd.New(group[0].src.DType(), append([]int{len(group)}, group[0].src.Shape...)...); err == nil {
			cp.bankIn[p] = in
		}
	}
	var out ndconv.Array
	if err == nil {
		b, size := in.Bytes(), len(group[0].src.Bytes())
		for i, r := range group {
			copy(b[i*size:(i+1)*size], r.src.Bytes())
		}
		out, err = p.Execute(ctx, in)
	}
	// Each file's output is its part of the bank's, a view: no copy or
	// zeroed allocation while the device is held (the bank's output lives
	// until its last file is written).
	per := out.Len() / max(1, len(group))
	for i, r := range group {
		r.done = true
		if r.err = err; err == nil {
			r.out = ndconv.Array{Shape: main.Shape(), Data: nd.SliceData(out.Data, i*per, (i+1)*per)}
		}
	}
}

// bankPlan returns the plan for banks of n files of kind key (made on
// first use): the run's plan's filters, method and device on an array of
// n of them, the kernels spanning the same axes, one further on. It is nil
// where that plan is not the run's plan's, and the kind is then not banked.
func (cp *computePlans) bankPlan(job filterJob, key string, n int, main *ndconv.FilterPlan, opt ndconv.Options, fs []filters.Filter, src ndconv.Array) *ndconv.FilterPlan {
	bkey := fmt.Sprint(key, " ×", n)
	if p := cp.banks[bkey]; p != nil {
		return p
	}
	rank := len(src.Shape)
	bopt := opt
	bopt.Axes = nil
	if len(opt.Axes) > 0 {
		for _, a := range opt.Axes {
			if a < 0 {
				a += rank
			}
			bopt.Axes = append(bopt.Axes, a+1)
		}
	} else {
		// By default a kernel spans the first axes, as many as it has.
		krank := -1
		for _, f := range fs {
			for _, k := range f.Terms {
				if krank >= 0 && len(k.Extents()) != krank {
					cp.noBank[key] = true
					return nil
				}
				krank = len(k.Extents())
			}
		}
		for a := range krank {
			bopt.Axes = append(bopt.Axes, a+1)
		}
	}
	p := samePlan(job, main, bopt, fs, append([]int{n}, src.Shape...), src.DType())
	if p != nil && !slices.Equal(p.Shape(), append([]int{n}, main.Shape()...)) {
		p.Close()
		p = nil
	}
	if p == nil {
		cp.noBank[key] = true
		return nil
	}
	testHookNote("bank plan " + bkey)
	cp.banks[bkey] = p
	return p
}

func (cp *computePlans) close() {
	for _, p := range cp.main {
		p.Close()
	}
	for _, m := range cp.all {
		for _, p := range m {
			p.Close()
		}
	}
	for _, p := range cp.banks {
		p.Close()
	}
	for _, a := range cp.alone {
		for _, p := range a.extra {
			p.Close()
		}
	}
}

// readInputList reads --from's list of inputs, one path a line (blank lines
// skipped), from a file or, for "-", standard input.
func readInputList(cmd *cobra.Command, from string) ([]string, error) {
	var r io.Reader = cmd.InOrStdin()
	if from != "-" {
		f, err := os.Open(from)
		if err != nil {
			return nil, fmt.Errorf("--from: %w", err)
		}
		defer f.Close()
		r = f
	}
	var paths []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := strings.TrimRight(sc.Text(), "\r"); strings.TrimSpace(line) != "" {
			paths = append(paths, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--from %s: %w", from, err)
	}
	return paths, nil
}
