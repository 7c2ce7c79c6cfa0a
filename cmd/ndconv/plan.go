package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/job"
)

// planFlags are plan's own flags, beside correlate's.
type planFlags struct {
	out      string
	blocks   string
	convolve bool
	emit     string
	image    string
	count    int
}

// newPlanCommand is ndconv plan: correlate's flags and arguments, but
// instead of running the job it writes the plan file (package job) and
// creates the output array's metadata, for workers to run.
func newPlanCommand() *cobra.Command {
	var pf planFlags
	cmd := newFilterCommand("plan", "plan a Zarr job for workers", func(cmd *cobra.Command, fj filterJob) error {
		return runPlan(cmd, fj, pf)
	})
	cmd.Use = "plan [flags] INPUT OUTPUT -o PLAN"
	cmd.Short = "Plan a Zarr job in blocks for array-job workers (ndconv worker)"
	cmd.Long = `Plans correlate (or, with --convolve, convolve) of INPUT into the Zarr array
OUTPUT in N-D blocks, as correlate would run it, and writes the plan to PLAN
(a path or a bucket URL: s3://, gs://, az://, file://): a small versioned JSON
file with the input and output, the kernels' weights, every option, the block
grid and a hash of it all. It then creates OUTPUT's metadata, recording the
plan's hash in its attributes (an OUTPUT that another plan created is
refused: remove it first; one this plan created is kept with its shards).
INPUT is a Zarr array (a path or a bucket URL) or a .npy or .raw file that
every worker can read; OUTPUT a Zarr array every worker can write.

Workers then run it: ndconv worker --plan PLAN --index I --count N computes
the I-th of N shares of the blocks (compact regions: runs in Z order); any worker may be killed and run again, and the
blocks it stored whole are skipped. ndconv status --plan PLAN counts the
blocks done. --emit k8s writes a Kubernetes Indexed Job manifest that runs
--count workers of --image on standard output; --emit slurm an sbatch array
script (run in --image with apptainer when given).

The options are correlate's (-k, --border, --cval, --origin, --mode, --axes,
--dtype, --method, --exact, --device, --workers, --device-memory, --shape and
--input-dtype for .raw); --blocks sets the blocks' shape (a multiple of
OUTPUT's shards per axis), else the largest blocks of whole shards within
128 MiB are taken.`
	fl := cmd.Flags()
	fl.StringVarP(&pf.out, "output-plan", "o", "", "write the plan to PLAN: a path or a bucket URL (- for standard output)")
	fl.StringVar(&pf.blocks, "blocks", "", "a block's shape, e.g. 256,256,256: a multiple of the output's shards per axis (default: the largest within 128 MiB)")
	fl.BoolVar(&pf.convolve, "convolve", false, "plan convolve rather than correlate")
	fl.StringVar(&pf.emit, "emit", "", "also write the workers' job to standard output: k8s (an Indexed Job manifest) or slurm (an sbatch array script)")
	fl.StringVar(&pf.image, "image", "", "with --emit: the container image that holds ndconv (required for k8s)")
	fl.IntVar(&pf.count, "count", 0, "with --emit: the number of workers (default: one per block, at most 64)")
	for _, name := range []string{"out-dir", "out-name", "from", "recursive", "fail-fast", "skip-existing", "resume", "part", "quality", "png-compression", "compression"} {
		_ = fl.MarkHidden(name)
	}
	return cmd
}

func runPlan(cmd *cobra.Command, fj filterJob, pf planFlags) error {
	switch {
	case fj.outDir != "":
		return usagef("plan takes one INPUT and one OUTPUT, not --out-dir")
	case fj.resume || fj.parts > 0:
		return usagef("plan: --resume and --part are for correlate; a plan's workers keep what is stored")
	case pf.out == "":
		return usagef("plan: give -o PLAN, where to write the plan (a path or a bucket URL)")
	case !blockable(fj):
		return usagef("plan: OUTPUT %s must be a Zarr array, from a Zarr, .npy or .raw INPUT", fj.output)
	case pf.emit != "" && pf.emit != "k8s" && pf.emit != "slurm":
		return usagef("plan: --emit %q: want k8s or slurm", pf.emit)
	case pf.emit == "k8s" && pf.image == "":
		return usagef("plan: --emit k8s needs --image, the container image that holds ndconv")
	case pf.emit == "" && (pf.image != "" || pf.count != 0):
		return usagef("plan: --image and --count are for --emit")
	case pf.count < 0:
		return usagef("plan: --count %d: want a positive number of workers", pf.count)
	case pf.emit != "" && pf.out == "-":
		return usagef("plan: with --emit the workers read the plan from -o PLAN: give a path or URL, not -")
	}
	if pf.convolve {
		fj.op = ndconv.Convolution
	}
	block, err := parseInts("--blocks", pf.blocks)
	if err != nil {
		return err
	}
	specs, err := parseSpecs(fj)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	spec, err := job.New(ctx, job.Config{Op: fj.op, Input: fj.input, Output: fj.output, Raw: fj.raw,
		Filters: func(rank int) ([]filters.Filter, error) { return buildFilters(specs, rank) },
		Options: fj.opt, Block: block})
	if errors.Is(err, job.ErrNotBlockable) {
		return usagef("plan: this job cannot run in blocks (filters of several terms, or an input in another byte order): run correlate")
	}
	if err != nil {
		return err
	}
	defer spec.Close()
	if err := spec.Create(ctx); err != nil {
		return err
	}
	summary := cmd.OutOrStdout()
	if pf.out == "-" {
		data, err := spec.Marshal()
		if err != nil {
			return err
		}
		if _, err := cmd.OutOrStdout().Write(data); err != nil {
			return err
		}
		summary = cmd.ErrOrStderr()
	} else if err := spec.Save(ctx, pf.out); err != nil {
		return err
	}
	if pf.emit != "" {
		count := pf.count
		if count == 0 {
			count = min(spec.Blocks(), 64)
		}
		if err := emitJob(cmd.OutOrStdout(), pf.emit, spec, pf.out, pf.image, count); err != nil {
			return err
		}
		summary = cmd.ErrOrStderr()
	}
	if fj.quiet {
		return nil
	}
	if pf.emit != "" {
		for _, loc := range []string{pf.out, spec.Input, spec.Output} {
			if !job.IsURL(loc) {
				fmt.Fprintf(summary, "note: %s is a local path: every worker must see it there (a shared file system), or give a bucket URL\n", loc)
			}
		}
	}
	fmt.Fprintf(summary, "%s: %s %s %v -> %s %s %v by %s, %d blocks of %v (grid %v); %s created\n",
		pf.out, spec.Op, spec.InputDType, spec.InputShape, spec.Output, spec.OutputDType, spec.OutputShape,
		spec.Options.Method, spec.Blocks(), spec.Block, spec.Grid, spec.Output)
	return nil
}

// emitJob writes the job that runs count workers of a plan: a Kubernetes
// Indexed Job (each pod's JOB_COMPLETION_INDEX is its index) or an sbatch
// array script (SLURM_ARRAY_TASK_ID).
func emitJob(w io.Writer, kind string, spec *job.Spec, planLoc, image string, count int) error {
	name := "ndconv-" + strings.TrimPrefix(spec.Hash, "sha256:")[:12]
	args := []string{"ndconv", "worker", "--plan", planLoc, "--count", strconv.Itoa(count)}
	var b strings.Builder
	switch kind {
	case "k8s":
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = strconv.Quote(a)
		}
		fmt.Fprintf(&b, `# ndconv plan %s: %d blocks of %v, %d workers.
# kubectl apply -f this; kubectl get job %s; ndconv status --plan %s
# A pod killed is run again at its index: the blocks it stored are kept.
apiVersion: batch/v1
kind: Job
metadata:
  name: %s
spec:
  completionMode: Indexed
  completions: %d
  parallelism: %d
  backoffLimit: %d
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: worker
          image: %s
          command: [%s]
`, spec.Hash, spec.Blocks(), spec.Block, count, name, planLoc, name, count, count, 3*count, strconv.Quote(image), strings.Join(quoted, ", "))
	case "slurm":
		run := shellQuote(args)
		if image != "" {
			run = "apptainer exec " + shellQuote([]string{image}) + " " + run
		}
		fmt.Fprintf(&b, `#!/bin/bash
# ndconv plan %s: %d blocks of %v, %d workers.
# sbatch this; ndconv status --plan %s
# A task that failed can be run again (sbatch --array=I this): the blocks
# it stored are kept.
#SBATCH --job-name=%s
#SBATCH --array=0-%d
#SBATCH --output=%s-%%a.out
set -euo pipefail
exec %s
`, spec.Hash, spec.Blocks(), spec.Block, count, planLoc, name, count-1, name, run)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// shellQuote quotes each argument for a POSIX shell where it needs it.
func shellQuote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@+") == "" {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
