// Command ndconv-beam runs an ndconv block job (a plan file written by
// `ndconv plan`) as an Apache Beam pipeline, on any Beam runner: Prism in
// this process (the default), Dataflow, Flink, Spark or a portable job
// server. Each worker runs the same block function as `ndconv worker`.
//
//	ndconv-beam --plan gs://bucket/job/plan.json [Beam flags]
//
// The Beam flags (--runner, --project, --region, --temp_location,
// --endpoint, --worker_binary, …) are the Go SDK's; beam/README.md shows
// those of Dataflow and Flink. The same binary runs as launcher and as
// worker: on a runner that starts workers elsewhere, pass a linux/amd64
// build of it as --worker_binary (or launch it with `go run` from this
// module, and the SDK cross-compiles one).
//
// When the pipeline ends, the command reports the blocks done, counted
// from the output (as `ndconv status --plan` does), and exits non-zero
// unless all are.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	ndbeam "github.com/ndconv/ndconv/beam"
)

var planURL = flag.String("plan", "", "the plan file `ndconv plan` wrote: a path or a bucket URL (s3://, gs://, azblob://, file://) the launcher reads (required)")

func init() {
	register.Function2x0(logCount)
}

// logCount logs the pipeline's count of blocks run, in the worker's log
// (Dataflow's job logs).
func logCount(ctx context.Context, n int) {
	log.Infof(ctx, "ndconv: %d blocks run", n)
}

func main() {
	flag.Parse()
	// A worker started by the runner (the same binary, with --worker)
	// serves its harness here and does not return.
	beam.Init()
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "ndconv-beam:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	if *planURL == "" {
		return errors.New("--plan is required: the plan file `ndconv plan` wrote")
	}
	plan, job, err := ndbeam.Load(ctx, ndbeam.JobFormat, *planURL)
	if err != nil {
		return err // the job package's errors name the plan
	}
	p, s := beam.NewPipelineWithRoot()
	count, err := ndbeam.Pipeline(s, ndbeam.JobFormat, plan)
	if err != nil {
		return fmt.Errorf("the plan %s: %w", *planURL, err)
	}
	beam.ParDo0(s, logCount, count)
	if err := beamx.Run(ctx, p); err != nil {
		return err
	}
	if *jobopts.Async {
		fmt.Printf("submitted %d blocks; `ndconv status --plan %s` counts those done\n", job.Blocks(), *planURL)
		return nil
	}
	done, total, err := job.Status(ctx)
	if err != nil {
		return fmt.Errorf("counting the blocks done: %w", err)
	}
	fmt.Printf("%d of %d blocks done\n", done, total)
	if done != total {
		return fmt.Errorf("%d of %d blocks not done; run again to finish them", total-done, total)
	}
	return nil
}
