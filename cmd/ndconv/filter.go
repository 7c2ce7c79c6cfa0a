package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/imageio/tiff"
	"github.com/ndconv/ndconv/nd"
)

// namedFilterHelp lists the named filters for --help.
const namedFilterHelp = `For example:
  gaussian:sigma=2   gaussian:sigma=2x1,order=0x1,truncate=4   uniform:size=5
  sobel:axis=0   prewitt   scharr   laplace   log:sigma=1.5
  gradient-magnitude:sigma=1   gabor:frequency=0.2,theta=0.5
  gabor-bank:orientations=8,frequency=0.2`

// filterFlags are the flags of convolve and correlate as given.
type filterFlags struct {
	kernels     []string
	border      string
	cval        string
	origin      string
	mode        string
	axes        string
	dtype       string
	device      string
	method      string
	shape       string
	inputDType  string
	quality     int
	pngLevel    int
	compression string
	gaborBank   int
	quiet       bool
	exact       bool
	workers     int
	deviceMem   string
	outDir      string
	outName     string
	recursive   bool
	failFast    bool
	skipExist   bool
	ceiling     bool
	from        string
	resume      bool
	part        string
	bankLayout  string
}

// filterJob is a parsed convolve or correlate command line.
type filterJob struct {
	op            ndconv.Operation
	opt           ndconv.Options
	raw           imageio.RawOptions
	kernels       []string
	gaborBank     int
	input, output string
	write         imageio.WriteOptions
	quiet         bool
	// With --out-dir, many inputs (files and directories; see runMany).
	inputs       []string
	outDir       string
	outName      string
	recursive    bool
	failFast     bool
	skipExisting bool
	// ceiling: read and write every file through the pipeline, filtering
	// none (the decode+encode ceiling a run is measured against).
	ceiling  bool
	rawFlags bool   // --shape or --input-dtype was given
	from     string // a file listing more inputs, one a line ("-": standard input)
	resume   bool   // a Zarr output: keep the shards stored, write the rest (runBlocks)
	// part, of parts (--part I/N, parts > 0): this process computes the
	// Zarr output's I-th of N shares of the blocks (compact regions: runs in Z order; an array job's task), keeping
	// what other tasks stored, as resume does.
	part, parts int
	// devices is a --device list (cuda:all, cuda:0,cuda:1): a Zarr
	// output's blocks spread over them (runBlocks); deviceList the devices
	// it names, opt.Device the first.
	devices    string
	deviceList []ndconv.DeviceName
}

func newFilterCommand(name, peer string, runJob func(*cobra.Command, filterJob) error) *cobra.Command {
	var f filterFlags
	cmd := &cobra.Command{
		Use:   name + " [flags] INPUT OUTPUT | INPUT... --out-dir DIR",
		Short: strings.ToUpper(name[:1]) + name[1:] + " INPUT with one kernel or a bank (" + peer + ")",
		Long: `Reads INPUT, ` + name + `s it with the kernel(s) and writes OUTPUT. Formats are
chosen by extension: .npy (any dtype and rank), .png and .jpg (H×W or H×W×C),
.tif/.tiff (pages as a 3-D stack), .nii/.nii.gz (the header's geometry is kept
from a NIfTI input) and .raw (with --shape and --input-dtype). Several -k make a
filter bank: the output gains a trailing axis with one value per kernel (write
it to .npy or .tif), or with --bank-layout planar a leading one, a plane per
kernel (K, H, W), as cuDNN and PyTorch lay out channels; a planar bank is
computed in memory, not streamed, and not into a Zarr OUTPUT. Complex data or weights (complex64, complex128) give a
complex output, as scipy.ndimage does (correlate conjugates complex weights,
convolve does not); only .npy and .raw hold complex arrays. A Zarr array is a
directory: x.zarr, or x.zarr/group/array inside a group. A Zarr OUTPUT is
computed in N-D blocks aligned with its shards, each written whole, once,
atomically, after its metadata: memory holds the blocks in flight, not the
volume; --resume keeps the shards an interrupted run stored and computes only
the blocks missing.

A kernel SPEC is a file — .npy (any rank and dtype) or .csv/.txt (rows of
numbers separated by commas or spaces, read as numpy.loadtxt reads them:
# comments, no empty values; one row is 1-D, several rows 2-D;
complex values as Python writes them, 1+2j); or
outer:a.csv,b.csv, a separable kernel of one 1-D factor file per kernel axis
in axis order, run as one pass per axis; or a named filter equal to
scipy.ndimage's: name[:key=value,...], per-axis values joined
by x. ` + namedFilterHelp + `
A named filter spans every axis but a colour image's channels, unless --axes
says otherwise.

With --out-dir DIR every argument is an input: a file, or a directory whose
files with a readable extension are taken in name order (--recursive descends
into subdirectories, and the outputs keep their relative paths under DIR), or
a glob pattern (quoted: 'tiles/*.png'); --from FILE (- for standard input)
adds more inputs, one path a line.
Each file is filtered exactly as a one-file call would filter it, one plan
serving every file of one shape and dtype, one after another. Outputs are
named by --out-name (fields {stem}, {ext} with its dot, {name}, {dir} the
relative directory, {i} the 0-based index; the format follows the extension),
e.g. --out-name '{stem}-blur{ext}' or '{stem}.npy'. A file that cannot be read
or filtered is reported on stderr with the reason and skipped; the others
finish and the exit status is 1 (--fail-fast stops at the first).
--skip-existing resumes a run. A summary line ends the run unless -q.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.outDir != "" {
				if f.from != "" {
					return nil
				}
				return cobra.MinimumNArgs(1)(cmd, args)
			}
			return cobra.ExactArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			job := filterJob{op: ndconv.Correlation, kernels: f.kernels, quiet: f.quiet,
				write: imageio.WriteOptions{JPEGQuality: f.quality, PNGCompression: pngCompression(f.pngLevel)}, gaborBank: f.gaborBank}
			if f.outDir != "" {
				job.inputs, job.outDir, job.outName = args, f.outDir, f.outName
				job.recursive, job.failFast, job.skipExisting = f.recursive, f.failFast, f.skipExist
				job.rawFlags = cmd.Flags().Changed("shape") || cmd.Flags().Changed("input-dtype")
				job.from, job.ceiling = f.from, f.ceiling
				if f.resume || f.part != "" {
					return usagef("--resume and --part are for one Zarr OUTPUT; with --out-dir, --skip-existing skips the outputs written")
				}
			} else {
				for _, flag := range []string{"out-name", "recursive", "fail-fast", "skip-existing", "from", "ceiling"} {
					if cmd.Flags().Changed(flag) {
						return usagef("--%s is for many inputs: give --out-dir", flag)
					}
				}
				job.input, job.output = args[0], args[1]
				job.resume = f.resume
				if f.part != "" {
					if _, err := fmt.Sscanf(f.part, "%d/%d", &job.part, &job.parts); err != nil || job.parts < 1 || job.part < 0 || job.part >= job.parts ||
						fmt.Sprintf("%d/%d", job.part, job.parts) != strings.TrimSpace(f.part) {
						return usagef("--part %q: want I/N, 0 ≤ I < N (this task's index of N, e.g. $SLURM_ARRAY_TASK_ID/4)", f.part)
					}
					job.resume = true // the other tasks' shards stay
				}
				if job.resume && !blockable(job) {
					return usagef("--resume and --part are for a Zarr OUTPUT, from a Zarr, .npy or .raw INPUT")
				}
			}
			c, err := tiff.ParseCompression(f.compression)
			if err != nil {
				return &usageError{fmt.Errorf("--compression: %w", err)}
			}
			job.write.TIFF = tiff.Options{Compression: c, Predictor: c != tiff.None}
			if name == "convolve" {
				job.op = ndconv.Convolution
			}
			if multiDevice(f.device) {
				// Several devices share a Zarr output's blocks (runBlocks);
				// the plan is made on the first.
				devs, err := ndconv.ParseDevices(f.device)
				if err != nil {
					return &usageError{fmt.Errorf("--device: %w", err)}
				}
				if job.outDir != "" || !blockable(job) {
					return usagef("--device %s: several devices share the blocks of a Zarr OUTPUT (from a Zarr, .npy or .raw INPUT); name one device otherwise", f.device)
				}
				job.devices, job.deviceList, f.device = f.device, devs, devs[0].String()
			}
			if job.opt, job.raw, err = parseFilterOptions(f); err != nil {
				return err
			}
			if job.outDir != "" {
				if err := checkOutName(job.outName); err != nil {
					return err
				}
				return runJob(cmd, job)
			}
			// A file that describes its own array (every format but .raw)
			// would silently override these: refuse them.
			if ext := filepath.Ext(job.input); !strings.EqualFold(ext, ".raw") {
				for _, flag := range []string{"shape", "input-dtype"} {
					if cmd.Flags().Changed(flag) {
						return usagef("--%s is for a .raw input; %s is a %s file, which gives its own shape and dtype", flag, job.input, ext)
					}
				}
			}
			return runJob(cmd, job)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.kernels, "kernel", "k", nil, "kernel SPEC, repeatable (several make a filter bank)")
	fl.StringVar(&f.border, "border", "reflect", "border rule: "+nd.BorderNames())
	fl.StringVar(&f.cval, "cval", "0", "value outside the input for --border constant: a number, inf or nan as scipy takes them (complex data: also 1+2j)")
	fl.StringVar(&f.origin, "origin", "", "kernel origin O[,O..] per kernel axis, or one for all (default 0)")
	fl.StringVar(&f.mode, "mode", "same", "output size: same|valid|full")
	fl.StringVar(&f.axes, "axes", "", "input axes A[,A..] the kernel spans (default: the first ones)")
	fl.StringVar(&f.dtype, "dtype", "", "output dtype: "+strings.ReplaceAll(nd.DTypeNames(), ", ", "|")+" (default: the input's)")
	fl.StringVar(&f.device, "device", "auto", "auto|cpu|cuda|cuda:N|opencl|opencl:P:D; for a Zarr OUTPUT also several: cuda:all, opencl:all, or a list (cuda:0,cuda:1)")
	fl.StringVar(&f.method, "method", "auto", "auto|direct|separable|fft|gemm|winograd (gemm: CUDA tensor cores; winograd: 3×3, 5×5, 3×3×3 kernels)")
	fl.BoolVar(&f.exact, "exact", false, "auto chooses only the exact methods (direct, separable: the same bits on every device), never fft, gemm or winograd")
	fl.StringVar(&f.shape, "shape", "", "shape of a .raw INPUT, e.g. 512,512")
	fl.StringVar(&f.inputDType, "input-dtype", "", "dtype of a .raw INPUT")
	fl.StringVar(&f.bankLayout, "bank-layout", "interleaved", "a bank's kernel axis: interleaved (last: H×W×K) or planar (first: K×H×W)")
	fl.IntVar(&f.gaborBank, "gabor-bank", 0, "make every -k gabor:… a bank of N orientations (θ + kπ/N)")
	fl.StringVar(&f.compression, "compression", "none", "compression of a .tif OUTPUT: none|deflate|lzw (with a predictor)")
	fl.IntVar(&f.quality, "quality", imageio.DefaultJPEGQuality, "JPEG quality of a .jpg OUTPUT, 1 to 100")
	fl.IntVar(&f.pngLevel, "png-compression", imageio.DefaultPNGCompression, "zlib level of a .png OUTPUT, 0 (none, fastest) to 9 (smallest); 1 is OpenCV's default")
	fl.IntVar(&f.workers, "workers", 0, "CPU threads to use (default 0: all cores)")
	fl.StringVar(&f.deviceMem, "device-memory", "", "GPU memory one execution may take, e.g. 4G (K, M, G, T: powers of 1024); larger problems run in chunks (default: 70% of the device's)")
	fl.StringVar(&f.outDir, "out-dir", "", "write one output per input into DIR; every argument is then an input (a file or a directory)")
	fl.StringVar(&f.outName, "out-name", "{stem}{ext}", "with --out-dir: output name template; fields {stem} {ext} {name} {dir} {i}")
	fl.StringVar(&f.from, "from", "", "with --out-dir: read more inputs from FILE, one path a line (- for standard input)")
	fl.BoolVar(&f.recursive, "recursive", false, "with --out-dir: descend into the input directories' subdirectories")
	fl.BoolVar(&f.failFast, "fail-fast", false, "with --out-dir: stop at the first file that fails")
	fl.BoolVar(&f.skipExist, "skip-existing", false, "with --out-dir: skip inputs whose output exists (resume a run)")
	fl.BoolVar(&f.ceiling, "ceiling", false, "with --out-dir: read and write every file, filtering none (the decode+encode ceiling a run is measured against; -k not needed)")
	fl.BoolVar(&f.resume, "resume", false, "a Zarr OUTPUT: keep the shards an interrupted run stored and compute only the blocks missing")
	fl.StringVar(&f.part, "part", "", "a Zarr OUTPUT computed by N processes (an array job): this one computes the I-th of N shares of the blocks (compact regions: runs in Z order; I/N, 0 ≤ I < N); any task may run again")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print nothing on success, and no progress bar")
	return cmd
}

// parseFilterOptions turns the flags into library options, reporting every
// malformed value as a usage error.
func parseFilterOptions(f filterFlags) (ndconv.Options, imageio.RawOptions, error) {
	var opt ndconv.Options
	var raw imageio.RawOptions
	var err error
	if opt.Border, err = nd.ParseBorder(f.border); err != nil {
		return opt, raw, &usageError{fmt.Errorf("--border: %w", err)}
	}
	if opt.Mode, err = nd.ParseMode(f.mode); err != nil {
		return opt, raw, &usageError{fmt.Errorf("--mode: %w", err)}
	}
	if opt.Method, err = ndconv.ParseMethod(f.method); err != nil {
		return opt, raw, &usageError{fmt.Errorf("--method: %w", err)}
	}
	if _, err = ndconv.ParseDevice(f.device); err != nil {
		return opt, raw, &usageError{fmt.Errorf("--device: %w", err)}
	}
	opt.Device = f.device
	if opt.BankLayout, err = ndconv.ParseBankLayout(f.bankLayout); err != nil {
		return opt, raw, &usageError{fmt.Errorf("--bank-layout: %w", err)}
	}
	opt.Exact = f.exact
	if opt.Exact && opt.Method != ndconv.Auto && !opt.Method.Exact() {
		return opt, raw, usagef("--exact allows only the exact methods (direct, separable), not --method %v", opt.Method)
	}
	if f.dtype != "" {
		if opt.DType, err = nd.ParseDType(f.dtype); err != nil {
			return opt, raw, &usageError{fmt.Errorf("--dtype: %w", err)}
		}
	}
	if f.inputDType != "" {
		if raw.DType, err = nd.ParseDType(f.inputDType); err != nil {
			return opt, raw, &usageError{fmt.Errorf("--input-dtype: %w", err)}
		}
	}
	if opt.Origin, err = parseInts("--origin", f.origin); err != nil {
		return opt, raw, err
	}
	if opt.Axes, err = parseInts("--axes", f.axes); err != nil {
		return opt, raw, err
	}
	if raw.Shape, err = parseInts("--shape", f.shape); err != nil {
		return opt, raw, err
	}
	cval, err := imageio.ParseComplex(f.cval)
	if err != nil {
		return opt, raw, usagef("--cval: %v", err)
	}
	// nan and ±inf pass as scipy takes them; the library judges them,
	// as it does for every entry point.
	opt.CVal, opt.CValImag = real(cval), imag(cval)
	if f.quality < 1 || f.quality > 100 {
		return opt, raw, usagef("--quality: %d is not from 1 to 100", f.quality)
	}
	if f.pngLevel < 0 || f.pngLevel > 9 {
		return opt, raw, usagef("--png-compression: %d is not from 0 to 9", f.pngLevel)
	}
	if f.workers < 0 {
		return opt, raw, usagef("--workers: %d is negative (0 means all cores)", f.workers)
	}
	opt.Workers = f.workers
	if opt.DeviceMemory, err = parseBytes("--device-memory", f.deviceMem); err != nil {
		return opt, raw, err
	}
	if f.gaborBank < 0 {
		return opt, raw, usagef("--gabor-bank: %d orientations", f.gaborBank)
	}
	if len(f.kernels) == 0 && !f.ceiling {
		return opt, raw, usagef("no kernel: give one with -k SPEC")
	}
	return opt, raw, nil
}

// parseBytes reads a size in bytes with an optional K, M, G or T suffix
// (powers of 1024; a trailing B or iB is allowed); "" is 0.
func parseBytes(flag, s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if t == "" {
		return 0, nil
	}
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	shift := 0
	if n := len(t); n > 0 {
		if i := strings.IndexByte("KMGT", t[n-1]); i >= 0 {
			shift, t = 10*(i+1), t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || v*float64(int64(1)<<shift) >= 1<<62 {
		return 0, usagef("%s: %q is not a positive size (bytes, or with K, M, G or T)", flag, s)
	}
	return int64(v * float64(int64(1)<<shift)), nil
}

// parseInts reads a comma-separated list of integers; "" is an empty list.
func parseInts(flag, s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return nil, usagef("%s: %q is not a list of integers", flag, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// runFilter carries out a parsed job: one input and one output, or with
// --out-dir many inputs (runMany).
func runFilter(cmd *cobra.Command, job filterJob) error {
	if job.outDir != "" {
		return runMany(cmd, job)
	}
	// Fail before any work on a bad kernel or an output that cannot be
	// written.
	specs, err := parseSpecs(job)
	if err != nil {
		return err
	}
	if err := imageio.CheckWritable(job.output); err != nil {
		return err
	}
	// The GPU's driver and context (~350 ms on the H100 host) start while
	// the input is read; auto then counts only what remains of the start.
	// The hold is never let go: the process's exit releases the context
	// sooner than the driver's release would, and a CPU run does not wait
	// for a start still under way.
	prewarm(job.opt.Device, job.input)
	// The other devices of a list too: their contexts were otherwise made
	// at the blocks' first call, after the plan, holding the first blocks
	// on them back (1.5 s on a host of four GPUs).
	for _, d := range job.deviceList[min(1, len(job.deviceList)):] {
		prewarm(d.String(), job.input)
	}
	trace("prewarm started")
	if blockable(job) {
		done, err := runBlocks(cmd, job, specs)
		if done {
			return err
		}
		if job.resume {
			return usagef("--resume: these filters (of several terms) or this input (not mappable) run whole, not in blocks; run without --resume")
		}
	}
	if streamable(job) {
		if done, err := runStreamed(cmd, job, specs); done {
			return err
		}
	}
	ctx := cmd.Context()
	start := time.Now()
	progress := newProgress(cmd.ErrOrStderr(), job.op.String(), job.quiet)
	job.opt.Progress = testHookProgress(progress.reporter())
	// A plan from the header that fails (a GPU not here) stops the read.
	readCtx, stopRead := context.WithCancelCause(ctx)
	defer stopRead(nil)
	early := planFromHeader(job, specs, stopRead)
	defer early.discard()
	testHookStage("reading")
	src, meta, err := readInput(readCtx, job.input, job.raw)
	if err != nil {
		return err
	}
	read := time.Since(start)
	trace("read")
	r, err := filterArray(ctx, job, specs, src, meta, progress, func(opt ndconv.Options, fs []filters.Filter) (*ndconv.FilterPlan, error) {
		p, err := early.take(ctx, src)
		if p == nil && err == nil {
			p, err = ndconv.NewFilterPlan(job.op, src.Shape, src.DType(), opt, fs...)
		}
		return p, err
	})
	if err != nil {
		return err
	}
	if !job.quiet {
		method := r.plan.Method()
		if strings.Contains(method, ndconv.FFT.String()) || strings.Contains(method, ndconv.Gemm.String()) || strings.Contains(method, ndconv.Winograd.String()) {
			method += " (differs from the exact methods by rounding)"
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s %v %v -> %s %v %v: %s on %s, %.1f ms (read %.1f ms, write %.1f ms)%s\n",
			job.op, src.DType(), src.Shape, filepath.Base(job.output), r.plan.DType(), r.plan.Shape(), method, r.plan.Device(),
			ms(r.compute), ms(read), ms(r.write), choiceNote(r.plan))
	}
	return nil
}

// parseSpecs parses the job's kernel SPECs, a bad one failing before any
// work.
func parseSpecs(job filterJob) ([]kernelSpec, error) {
	var specs []kernelSpec
	for _, text := range job.kernels {
		s, err := parseKernelSpec(text)
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	return withGaborBank(specs, job.gaborBank)
}

// filtered is what filterArray did: the plan it ran and the time it took.
type filtered struct {
	plan           *ndconv.FilterPlan
	compute, write time.Duration
}

// filterArray filters src, read from job.input, with the specs and writes
// job.output: everything a job does after the read, the same for one file
// and for each of many (so that a folder's outputs are a one-file call's,
// byte for byte). planFor returns the plan for src's shape and dtype, made
// or kept by the caller, for the options and filters fitted to src.
// progress, which may be nil, is finished when the computation ends.
func filterArray(ctx context.Context, job filterJob, specs []kernelSpec, src ndconv.Array, meta imageio.Meta,
	progress *terminalProgress, planFor func(ndconv.Options, []filters.Filter) (*ndconv.FilterPlan, error)) (filtered, error) {
	out, r, err := computeArray(ctx, job, specs, src, meta, progress, planFor)
	if err != nil {
		return r, err
	}
	r.write, err = writeOutput(ctx, job, out, meta)
	return r, err
}

// computeArray is filterArray up to the write: the filters built, the plan
// made (planFor) and executed on src.
func computeArray(ctx context.Context, job filterJob, specs []kernelSpec, src ndconv.Array, meta imageio.Meta,
	progress *terminalProgress, planFor func(ndconv.Options, []filters.Filter) (*ndconv.FilterPlan, error)) (ndconv.Array, filtered, error) {
	return computeArrayWith(ctx, job, specs, src, meta, progress, planFor, nil)
}

// computeArrayWith is computeArray with execute, where not nil, running
// the plan on src in place of its Execute (a many-file run's banks of
// images on a GPU).
func computeArrayWith(ctx context.Context, job filterJob, specs []kernelSpec, src ndconv.Array, meta imageio.Meta,
	progress *terminalProgress, planFor func(ndconv.Options, []filters.Filter) (*ndconv.FilterPlan, error),
	execute func(context.Context, *ndconv.FilterPlan, ndconv.Array) (ndconv.Array, error)) (ndconv.Array, filtered, error) {
	var r filtered
	fs, err := buildFilters(specs, spatialAxes(&job.opt, specs, src, meta))
	if err != nil {
		return ndconv.Array{}, r, err
	}
	if len(fs) > 1 && imageio.IsImageFile(job.output) {
		return ndconv.Array{}, r, usagef("%s: a filter bank of %d filters gives one output per filter in an axis of its own, which %s cannot hold; write .npy or .tif",
			job.output, len(fs), filepath.Ext(job.output))
	}
	p, err := planFor(job.opt, fs)
	if err != nil {
		return ndconv.Array{}, r, err
	}
	r.plan = p
	if err := imageio.CheckDType(job.output, p.DType()); err != nil {
		return ndconv.Array{}, r, &usageError{err}
	}
	trace("planned on " + p.Device())
	start := time.Now()
	testHookStage("computing")
	testHookPanic("computing")
	var out ndconv.Array
	if execute != nil {
		out, err = execute(ctx, p, src)
	} else {
		out, err = p.Execute(ctx, src)
	}
	progress.finish()
	if err != nil {
		return ndconv.Array{}, r, err
	}
	r.compute = time.Since(start)
	trace("computed")
	return out, r, nil
}

// writeOutput writes a job's output with the input's metadata.
func writeOutput(ctx context.Context, job filterJob, out ndconv.Array, meta imageio.Meta) (time.Duration, error) {
	start := time.Now()
	job.write.Meta = meta
	// A planar bank's kernel axis, first, is an OME-Zarr output's channels.
	job.write.BankFirst = job.opt.BankLayout == ndconv.Planar
	if err := imageio.WriteFileContext(ctx, job.output, out, job.write); err != nil {
		return 0, err
	}
	trace("written")
	return time.Since(start), nil
}

// headerPlan is a plan built, and its GPU kernels compiled, from the
// input file's header while the data are read: for a named GPU, where the
// header comes apart from the data (.npy, .raw). Auto decides after the
// read instead, when the prewarm has had the read's time: deciding from
// the header would count start-up that the read hides.
type headerPlan struct {
	header imageio.Header
	done   chan struct{}
	plan   *ndconv.FilterPlan
	err    error
	taken  bool
}

// planFromHeader starts building the job's plan from the input's header,
// or returns nil where it does not apply. A failure calls fail with its
// error, at once.
func planFromHeader(job filterJob, specs []kernelSpec, fail context.CancelCauseFunc) *headerPlan {
	dev, err := ndconv.ParseDevice(job.opt.Device)
	if err != nil || !dev.GPU() {
		return nil
	}
	h, ok := imageio.ReadHeader(job.input, job.raw)
	if !ok {
		return nil
	}
	hp := &headerPlan{header: h, done: make(chan struct{})}
	go func() {
		defer close(hp.done)
		defer func() {
			// A panic on this goroutine would end the process.
			if r := recover(); r != nil {
				hp.plan, hp.err = nil, &nd.PanicError{Value: r, Stack: debug.Stack()}
				fail(hp.err)
			}
		}()
		opt := job.opt
		fs, err := buildFilters(specs, spatialAxes(&opt, specs, ndconv.Array{Shape: h.Shape}, imageio.Meta{}))
		if err != nil {
			hp.err = err
		} else if hp.plan, hp.err = ndconv.NewFilterPlan(job.op, h.Shape, h.DType, opt, fs...); hp.err == nil {
			hp.err = hp.plan.Compile()
		}
		if hp.err != nil {
			fail(hp.err)
		}
	}()
	testHookNote("planning from the header")
	return hp
}

// take waits for the plan and returns it if src is what the header said
// (nil, nil otherwise: plan as usual), or the error building it met.
func (hp *headerPlan) take(ctx context.Context, src ndconv.Array) (*ndconv.FilterPlan, error) {
	if hp == nil || !slices.Equal(src.Shape, hp.header.Shape) || src.DType() != hp.header.DType {
		return nil, nil
	}
	select {
	case <-hp.done:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	hp.taken = true
	return hp.plan, hp.err
}

// discard closes a plan that was not taken, once it is built.
func (hp *headerPlan) discard() {
	if hp == nil || hp.taken {
		return
	}
	go func() {
		defer func() { recover() }() // the job's result is known; a failed clean-up changes nothing
		<-hp.done
		if hp.plan != nil {
			hp.plan.Close()
		}
	}()
}

// prewarm starts opening the device named in the background
// (ndconv.Prewarm): a named GPU always, auto's GPU for an input of at
// least ndconv.AutoPrewarmMinBytes, the CPU never. The result's Close would
// let go of it (nil does nothing).
func prewarm(device, input string) *ndconv.Warm {
	dev, err := ndconv.ParseDevice(device)
	if err != nil || !(dev.IsAuto() || dev.GPU()) {
		return nil
	}
	if dev.IsAuto() {
		if fi, err := os.Stat(input); err != nil || fi.Size() < ndconv.AutoPrewarmMinBytes {
			return nil
		}
	}
	testHookNote("prewarm " + dev.String())
	w, _ := ndconv.Prewarm(device)
	return w
}

// choiceNote is the summary line's ending: why auto chose the device
// ("; auto: cpu 42 ms est. vs cuda:0 410 ms est. (…)"), or nothing where
// the device was named.
func choiceNote(p *ndconv.FilterPlan) string {
	if c := p.DeviceChoice(); c != "" {
		return "; " + c
	}
	return ""
}

// readInput reads the input file, returning ctx's cause as soon as ctx is
// done: the decoders do not take a context, so the read goes on in its own
// goroutine and ends with the process, which exits on the error. Reading
// writes nothing, so nothing is left behind.
func readInput(ctx context.Context, path string, raw imageio.RawOptions) (ndconv.Array, imageio.Meta, error) {
	type result struct {
		a    ndconv.Array
		meta imageio.Meta
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() { done <- r }()
		defer nd.RecoverPanic(&r.err) // a decoder's panic on this goroutine would end the process
		testHookPanic("reading")
		r.a, r.meta, r.err = imageio.ReadFile(path, raw)
	}()
	select {
	case r := <-done:
		return r.a, r.meta, r.err
	case <-ctx.Done():
		return ndconv.Array{}, imageio.Meta{}, context.Cause(ctx)
	}
}

// spatialAxes returns how many axes named filters span and, for a colour
// image given no --axes, sets opt.Axes to every axis but the channels:
// a named filter spans all non-channel axes (DESIGN §4). Kernel files keep
// the default, the first axes, which skips the trailing channel axis too.
func spatialAxes(opt *ndconv.Options, specs []kernelSpec, src ndconv.Array, meta imageio.Meta) int {
	if len(opt.Axes) > 0 {
		return len(opt.Axes)
	}
	rank := len(src.Shape)
	if meta.Channels == 0 {
		return rank
	}
	for _, s := range specs {
		if s.named != nil {
			for a := range rank - 1 {
				opt.Axes = append(opt.Axes, a)
			}
			break
		}
	}
	return rank - 1
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pngCompression is WriteOptions.PNGCompression for a zlib level 0 to 9,
// whose 0 means the default.
func pngCompression(level int) int {
	if level == 0 {
		return imageio.PNGNoCompression
	}
	return level
}

// multiDevice reports whether a --device value names several devices: a
// list, or every device of a backend.
func multiDevice(s string) bool {
	return strings.Contains(s, ",") || strings.HasSuffix(strings.ToLower(strings.TrimSpace(s)), ":all")
}
