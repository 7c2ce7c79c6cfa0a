package beam

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/ndconv/ndconv/nd"
)

// Job is a plan as the pipeline runs it. Blocks are numbered 0..Blocks()-1;
// running one is a pure function of the plan and its index, and its
// writes are idempotent.
type Job interface {
	// Blocks is the number of blocks.
	Blocks() int
	// Create writes what the blocks write into (the output array's
	// metadata). It is idempotent: called again, it changes nothing.
	Create(ctx context.Context) error
	// Open prepares to run blocks (reading kernels, opening stores).
	Open(ctx context.Context) (Runner, error)
	// Status counts the blocks whose output is written, from the output
	// itself.
	Status(ctx context.Context) (done, total int, err error)
}

// Runner runs blocks of one opened Job, one at a time: a DoFn instance
// processes one bundle at a time, and each instance opens its own Runner.
type Runner interface {
	// Run runs block i; run again, it writes the same bytes. When it
	// returns nil, the block is stored: Beam's Teardown, which calls
	// Close, is best effort (Prism, for one, does not call it before the
	// pipeline ends), so nothing may wait for Close to be written.
	Run(ctx context.Context, i int) error
	// Close releases what Open took.
	Close() error
}

// Format reads plans of one kind.
type Format struct {
	// Load reads the plan at url (a path or a bucket URL) and returns the
	// bytes that Parse reads back: what the pipeline's workers get.
	Load func(ctx context.Context, url string) ([]byte, error)
	// Parse reads a plan's bytes.
	Parse func(plan []byte) (Job, error)
}

var (
	formatsMu sync.RWMutex
	formats   = map[string]Format{}
)

// Register makes a plan format available by name, to the launcher and to
// the pipeline's workers; call it from an init function, so that a worker
// (the same binary) has it too. It panics if name is registered twice or
// f lacks Parse, a programming error.
func Register(name string, f Format) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	if _, dup := formats[name]; dup {
		panic("beam: plan format " + name + " registered twice")
	}
	if f.Parse == nil {
		panic("beam: plan format " + name + " has no Parse")
	}
	formats[name] = f
}

func lookup(name string) (Format, error) {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	f, ok := formats[name]
	if !ok {
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range formats {
				if !yield(n) {
					return
				}
			}
		})
		supported := strings.Join(names, ", ")
		if supported == "" {
			supported = "none"
		}
		return Format{}, &nd.UnsupportedError{What: "plan format", Value: name, Supported: supported}
	}
	return f, nil
}

// JobFormat is the name of ndconv's plan format (the job package's plan
// files, as `ndconv plan` writes them).
const JobFormat = "ndconv"

// Load reads the plan at url in the named format and returns its bytes
// and the job they describe.
func Load(ctx context.Context, format, url string) ([]byte, Job, error) {
	f, err := lookup(format)
	if err != nil {
		return nil, nil, err
	}
	if f.Load == nil {
		return nil, nil, &nd.UnsupportedError{What: "plan format", Value: format + " (it reads plans from bytes only, not from a URL)"}
	}
	plan, err := f.Load(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	job, err := f.Parse(plan)
	if err != nil {
		return nil, nil, err
	}
	return plan, job, nil
}

// Parse reads a plan's bytes in the named format.
func Parse(format string, plan []byte) (Job, error) {
	f, err := lookup(format)
	if err != nil {
		return nil, err
	}
	return f.Parse(plan)
}

// Pipeline adds the job's transforms to s and returns a PCollection<int>
// holding one element, the number of blocks run (the job's Blocks()). It
// parses the plan here, so that a bad plan fails when the pipeline is
// built, not on the workers.
func Pipeline(s beam.Scope, format string, plan []byte) (beam.PCollection, error) {
	job, err := Parse(format, plan)
	if err != nil {
		return beam.PCollection{}, err
	}
	if job.Blocks() <= 0 {
		return beam.PCollection{}, &nd.ArgumentError{Arg: "plan", Msg: fmt.Sprintf("%d blocks; a job has at least one", job.Blocks())}
	}
	s = s.Scope("ndconv")
	imp := beam.Impulse(s)
	idx := beam.ParDo(s, &indicesFn{Format: format, Plan: plan}, imp)
	idx = beam.Reshuffle(s, idx)
	ones := beam.ParDo(s, &blockFn{Format: format, Plan: plan}, idx)
	return stats.Sum(s, ones), nil
}

func init() {
	register.DoFn3x1[context.Context, []byte, func(int), error](&indicesFn{})
	register.Emitter1[int]()
	register.DoFn2x2[context.Context, int, int, error](&blockFn{})
}

// blocksDone counts the blocks run, for a runner's monitoring page
// (Dataflow's job page shows it as a custom counter).
var blocksDone = beam.NewCounter("ndconv", "blocks")

// indicesFn creates the output once and emits the block indices. It runs
// once per pipeline (on Impulse's one element), or again if the runner
// retries its bundle: Create is idempotent and the retried bundle's
// output replaces the first's.
type indicesFn struct {
	Format string // a registered plan format
	Plan   []byte // the plan, as Format's Parse reads it
}

func (f *indicesFn) ProcessElement(ctx context.Context, _ []byte, emit func(int)) error {
	job, err := Parse(f.Format, f.Plan)
	if err != nil {
		return err
	}
	if err := job.Create(ctx); err != nil {
		return fmt.Errorf("creating the output: %w", err)
	}
	for i := range job.Blocks() {
		emit(i)
	}
	return nil
}

// blockFn runs a block per element and emits 1 for each. The plan is
// parsed and opened once per DoFn instance (Setup), closed in Teardown.
type blockFn struct {
	Format string
	Plan   []byte

	n      int
	runner Runner
}

func (f *blockFn) Setup(ctx context.Context) error {
	job, err := Parse(f.Format, f.Plan)
	if err != nil {
		return err
	}
	f.n = job.Blocks()
	f.runner, err = job.Open(ctx)
	if err != nil {
		return fmt.Errorf("opening the job: %w", err)
	}
	return nil
}

func (f *blockFn) ProcessElement(ctx context.Context, i int) (int, error) {
	if i < 0 || i >= f.n {
		return 0, &nd.ArgumentError{Arg: "block index", Msg: fmt.Sprintf("%d, outside 0..%d", i, f.n-1)}
	}
	if err := f.runner.Run(ctx, i); err != nil {
		return 0, fmt.Errorf("block %d of %d: %w", i, f.n, err)
	}
	blocksDone.Inc(ctx, 1)
	return 1, nil
}

func (f *blockFn) Teardown() error {
	if f.runner == nil {
		return nil
	}
	err := f.runner.Close()
	f.runner = nil
	return err
}
