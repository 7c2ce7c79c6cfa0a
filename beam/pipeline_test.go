package beam_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	ndbeam "github.com/ndconv/ndconv/beam"
	"github.com/ndconv/ndconv/nd"
)

// The tests run on the Prism runner, in this process (ptest's default):
// the DoFns are serialised into the pipeline and rebuilt by the SDK
// harness from their fields, as on a cluster, so the fake's state below
// (package variables) is shared by the test and the "workers".
func TestMain(m *testing.M) { ptest.Main(m) }

// fakePlan is the fake format's plan: block i writes dir/block-i with
// bytes that are a function of (i, blocks) only, through a temporary file
// and a rename, as the job package's blocks write through the store.
type fakePlan struct {
	Dir string
	N   int // blocks
	// FailOnce makes block FailOnce (if ≥ 0) fail the first time it runs
	// in this process, as a worker killed mid-block would.
	FailOnce int
}

// fakeState counts what the workers did with one plan's directory.
type fakeState struct {
	mu      sync.Mutex
	runs    map[int]int
	creates int
	opens   int
	closes  int
	failed  bool
}

var (
	statesMu sync.Mutex
	states   = map[string]*fakeState{}
)

func state(dir string) *fakeState {
	statesMu.Lock()
	defer statesMu.Unlock()
	st := states[dir]
	if st == nil {
		st = &fakeState{runs: map[int]int{}}
		states[dir] = st
	}
	return st
}

func init() {
	ndbeam.Register("fake", ndbeam.Format{
		Load: func(_ context.Context, url string) ([]byte, error) { return os.ReadFile(url) },
		Parse: func(plan []byte) (ndbeam.Job, error) {
			var p fakePlan
			if err := json.Unmarshal(plan, &p); err != nil {
				return nil, fmt.Errorf("fake plan: %w", err)
			}
			return &p, nil
		},
	})
}

func (p *fakePlan) Blocks() int { return p.N }

func blockBytes(i, n int) []byte {
	sum := sha256.Sum256(fmt.Appendf(nil, "block %d of %d", i, n))
	return sum[:]
}

func blockPath(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("block-%05d", i)) }

func (p *fakePlan) Create(context.Context) error {
	st := state(p.Dir)
	st.mu.Lock()
	st.creates++
	st.mu.Unlock()
	return os.MkdirAll(p.Dir, 0o755)
}

func (p *fakePlan) Open(context.Context) (ndbeam.Runner, error) {
	st := state(p.Dir)
	st.mu.Lock()
	st.opens++
	st.mu.Unlock()
	return &fakeRunner{p: p, st: st}, nil
}

func (p *fakePlan) Status(context.Context) (done, total int, err error) {
	for i := range p.N {
		b, err := os.ReadFile(blockPath(p.Dir, i))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		if string(b) == string(blockBytes(i, p.N)) {
			done++
		}
	}
	return done, p.N, nil
}

type fakeRunner struct {
	p  *fakePlan
	st *fakeState
}

func (r *fakeRunner) Run(_ context.Context, i int) error {
	r.st.mu.Lock()
	r.st.runs[i]++
	fail := i == r.p.FailOnce && !r.st.failed
	if fail {
		r.st.failed = true
	}
	r.st.mu.Unlock()
	if fail {
		return errors.New("fake failure")
	}
	f, err := os.CreateTemp(r.p.Dir, ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(blockBytes(i, r.p.N)); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), blockPath(r.p.Dir, i))
}

func (r *fakeRunner) Close() error {
	r.st.mu.Lock()
	r.st.closes++
	r.st.mu.Unlock()
	return nil
}

// run builds and runs the pipeline of plan on Prism; the pipeline itself
// asserts that its count of blocks run is want.
func run(t *testing.T, plan fakePlan) error {
	t.Helper()
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	count, err := ndbeam.Pipeline(s, "fake", b)
	if err != nil {
		t.Fatal(err)
	}
	passert.Equals(s, count, plan.N)
	return ptest.Run(p)
}

// checkOutput fails unless dir holds exactly the plan's blocks, each with
// its bytes: nothing lost, nothing extra (no temporary files left).
func checkOutput(t *testing.T, plan fakePlan) {
	t.Helper()
	entries, err := os.ReadDir(plan.Dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for i := range plan.N {
		want[filepath.Base(blockPath(plan.Dir, i))] = i
	}
	for _, e := range entries {
		i, ok := want[e.Name()]
		if !ok {
			t.Errorf("unexpected file %s", e.Name())
			continue
		}
		delete(want, e.Name())
		b, err := os.ReadFile(filepath.Join(plan.Dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(blockBytes(i, plan.N)) {
			t.Errorf("%s: wrong bytes", e.Name())
		}
	}
	for name := range want {
		t.Errorf("%s missing", name)
	}
	job, _ := ndbeam.Parse("fake", mustJSON(t, plan))
	done, total, err := job.Status(context.Background())
	if err != nil || done != plan.N || total != plan.N {
		t.Errorf("Status = %d, %d, %v; want %d, %d, nil", done, total, err, plan.N, plan.N)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPipeline runs a 64-block job on Prism: every block's output is
// written, once in effect, the output is created once, each opened runner
// is closed; run again, the pipeline writes the same bytes.
func TestPipeline(t *testing.T) {
	plan := fakePlan{Dir: t.TempDir(), N: 64, FailOnce: -1}
	if err := run(t, plan); err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	checkOutput(t, plan)
	st := state(plan.Dir)
	st.mu.Lock()
	for i := range plan.N {
		if st.runs[i] < 1 {
			t.Errorf("block %d never ran", i)
		}
	}
	t.Logf("runs per block %v; Create %d times; runners opened %d, closed %d", st.runs, st.creates, st.opens, st.closes)
	if st.creates < 1 {
		t.Errorf("Create ran %d times", st.creates)
	}
	st.mu.Unlock()

	// Again, over the first run's output: the same bytes, still nothing
	// extra.
	if err := run(t, plan); err != nil {
		t.Fatalf("pipeline run again: %v", err)
	}
	checkOutput(t, plan)
	st.mu.Lock()
	t.Logf("after the second run: Create %d times; runners opened %d, closed %d", st.creates, st.opens, st.closes)
	st.mu.Unlock()
}

// TestPipelineFailedBlock: a block that fails fails the pipeline with an
// error naming it (a runner may first retry the bundle; Prism does not),
// and running the pipeline again completes the job.
func TestPipelineFailedBlock(t *testing.T) {
	plan := fakePlan{Dir: t.TempDir(), N: 16, FailOnce: 5}
	err := run(t, plan)
	if err == nil {
		// A runner that retried the failed bundle: the output must be whole.
		t.Logf("the runner retried block 5's bundle")
	} else {
		if !strings.Contains(err.Error(), "block 5 of 16: fake failure") {
			t.Errorf("pipeline error %q does not name the block", err)
		}
		t.Logf("first run: %v", err)
		if err := run(t, plan); err != nil {
			t.Fatalf("pipeline run again: %v", err)
		}
	}
	checkOutput(t, plan)
}

// TestPipelineBadPlan: an unknown format or a plan without blocks fails
// when the pipeline is built, with one line naming the problem.
func TestPipelineBadPlan(t *testing.T) {
	_, s := beam.NewPipelineWithRoot()
	_, err := ndbeam.Pipeline(s, "nosuch", []byte("{}"))
	var unsup *nd.UnsupportedError
	if !errors.As(err, &unsup) || !strings.Contains(err.Error(), `"nosuch"`) || !strings.Contains(err.Error(), "fake") {
		t.Errorf("unknown format: %v", err)
	}
	_, err = ndbeam.Pipeline(s, "fake", mustJSON(t, fakePlan{Dir: t.TempDir()}))
	var arg *nd.ArgumentError
	if !errors.As(err, &arg) {
		t.Errorf("a plan of 0 blocks: %v", err)
	}
	_, err = ndbeam.Pipeline(s, "fake", []byte("{"))
	if err == nil || !strings.Contains(err.Error(), "fake plan") {
		t.Errorf("a plan that does not parse: %v", err)
	}
	// The job package's format: a plan that is not there fails to load.
	_, _, err = ndbeam.Load(context.Background(), ndbeam.JobFormat, filepath.Join(t.TempDir(), "nosuch.json"))
	if err == nil || errors.As(err, &unsup) {
		t.Errorf("the job format, a plan that is not there: %v", err)
	}
	t.Log(err)
}
