package gpucache

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ndconv/ndconv/internal/gputest"
)

// artifact stands in for a loaded module or program.
type artifact struct{ from string }

// fakeBuilder stands in for a compiler and a driver: it counts builds, and
// its loader refuses payloads that are not ones it built, as a driver
// refuses a damaged binary.
type fakeBuilder struct {
	builds  atomic.Int64
	delay   time.Duration
	fail    bool
	payload []byte // what a build returns to store; nil: "BIN:good"
}

var errBuild = errors.New("build failed")

func (f *fakeBuilder) build() (*artifact, []byte, error) {
	f.builds.Add(1)
	time.Sleep(f.delay)
	if f.fail {
		return nil, nil, errBuild
	}
	if f.payload != nil {
		return &artifact{"built"}, f.payload, nil
	}
	return &artifact{"built"}, []byte("BIN:good"), nil
}

func (f *fakeBuilder) load(payload []byte) (*artifact, error) {
	if !bytes.HasPrefix(payload, []byte("BIN:")) {
		return nil, errors.New("invalid binary")
	}
	return &artifact{"loaded"}, nil
}

// TestCacheLayers walks a key through cold, warm, a new process, a damaged
// file and a file the driver refuses, counting each step.
func TestCacheLayers(t *testing.T) {
	t.Setenv(DirEnv, t.TempDir())
	s := testStore
	dir, _ := s.Dir()
	fb := &fakeBuilder{}
	want := func(c *Cache[*artifact], step string, st Stats) {
		t.Helper()
		if got := c.Stats(); got != st {
			t.Errorf("%s: stats %+v, want %+v", step, got, st)
		}
	}

	c := &Cache[*artifact]{}
	a1, err := c.Get(s, testKey, fb.build, fb.load)
	if err != nil || a1 == nil || a1.from != "built" {
		t.Fatalf("cold: %v, %v", a1, err)
	}
	want(c, "cold", Stats{Builds: 1, DiskWrites: 1})
	if a2, _ := c.Get(s, testKey, fb.build, fb.load); a2 != a1 {
		t.Error("warm: another artifact")
	}
	want(c, "warm", Stats{MemoryHits: 1, Builds: 1, DiskWrites: 1})

	c = &Cache[*artifact]{} // a new process: only the disk remembers
	if a, err := c.Get(s, testKey, fb.build, fb.load); err != nil || a.from != "loaded" {
		t.Fatal(a, err)
	}
	want(c, "disk", Stats{DiskHits: 1})

	path := s.FileName(dir, testKey)
	data, _ := os.ReadFile(path)
	data[len(data)-1] ^= 0xff
	os.WriteFile(path, data, 0o644)
	c = &Cache[*artifact]{}
	if _, err := c.Get(s, testKey, fb.build, fb.load); err != nil {
		t.Fatal(err)
	}
	want(c, "damaged file", Stats{Builds: 1, DiskWrites: 1, Rejected: 1})
	if _, err := s.Read(dir, testKey); err != nil {
		t.Errorf("the damaged file was not replaced: %v", err)
	}

	// A file whose checksum holds but whose payload the driver refuses.
	os.WriteFile(path, s.Encode(testKey, []byte("garbage")), 0o644)
	c = &Cache[*artifact]{}
	if _, err := c.Get(s, testKey, fb.build, fb.load); err != nil {
		t.Fatal(err)
	}
	want(c, "refused file", Stats{Builds: 1, DiskWrites: 1, Rejected: 1})
	if got, _ := s.Read(dir, testKey); string(got) != "BIN:good" {
		t.Errorf("the refused file was not replaced: %q", got)
	}
	if fb.builds.Load() != 3 {
		t.Errorf("%d builds in all, want 3", fb.builds.Load())
	}
}

func TestCacheFailuresAreNotKept(t *testing.T) {
	t.Setenv(DirEnv, t.TempDir())
	fb := &fakeBuilder{fail: true}
	c := &Cache[*artifact]{}
	for range 2 {
		if a, err := c.Get(testStore, testKey, fb.build, fb.load); !errors.Is(err, errBuild) || a != nil {
			t.Fatalf("failing build returned %v, %v", a, err)
		}
	}
	if fb.builds.Load() != 2 {
		t.Errorf("a failure was remembered: %d builds for 2 calls", fb.builds.Load())
	}
	if s := c.Stats(); s != (Stats{Builds: 2}) {
		t.Errorf("stats %+v", s)
	}
	fb.fail = false
	if _, err := c.Get(testStore, testKey, fb.build, fb.load); err != nil {
		t.Errorf("after the failure: %v", err)
	}
}

// TestCacheUnusableDir: a cache directory that cannot be made costs the
// caching, not the artifact.
func TestCacheUnusableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, nil, 0o644)
	t.Setenv(DirEnv, file) // the Dir is file/test: cannot exist
	fb := &fakeBuilder{}
	c := &Cache[*artifact]{}
	if _, err := c.Get(testStore, testKey, fb.build, fb.load); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Builds != 1 || s.DiskErrors != 1 || s.DiskWrites != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestCacheNoPayload: a build without a payload (an implementation that
// gives no binary) is kept in memory and not written.
func TestCacheNoPayload(t *testing.T) {
	t.Setenv(DirEnv, t.TempDir())
	fb := &fakeBuilder{payload: []byte{}}
	c := &Cache[*artifact]{}
	if _, err := c.Get(testStore, testKey, fb.build, fb.load); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s != (Stats{Builds: 1}) {
		t.Errorf("stats %+v", s)
	}
	dir, _ := testStore.Dir()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d files written", len(entries))
	}
}

// TestCacheBuildsOnce: many goroutines asking for one key at once share
// one build and one artifact.
func TestCacheBuildsOnce(t *testing.T) {
	t.Setenv(DirEnv, t.TempDir())
	fb := &fakeBuilder{delay: 50 * time.Millisecond}
	c := &Cache[*artifact]{}
	const n = 16
	got := make([]*artifact, n)
	gputest.Together(n, func(i int) {
		a, err := c.Get(testStore, testKey, fb.build, fb.load)
		if err != nil {
			t.Error(err)
		}
		got[i] = a
	})
	if fb.builds.Load() != 1 {
		t.Errorf("%d builds, want 1", fb.builds.Load())
	}
	for _, a := range got {
		if a != got[0] || a == nil {
			t.Fatal("callers got different artifacts")
		}
	}
	if s := c.Stats(); s.MemoryHits != n-1 {
		t.Errorf("stats %+v, want %d memory hits", s, n-1)
	}
	if d := c.Drain(); len(d) != 1 || d[0] != got[0] {
		t.Errorf("Drain = %v", d)
	}
	if d := c.Drain(); len(d) != 0 {
		t.Errorf("second Drain = %v", d)
	}
}

// TestCacheHas: Has answers what a Get would find without building —
// nothing, then the artifact in memory, then (a new process) the file.
func TestCacheHas(t *testing.T) {
	t.Setenv(DirEnv, t.TempDir())
	s := testStore
	fb := &fakeBuilder{}
	c := &Cache[*artifact]{}
	if c.Has(s, testKey) || s.Has(testKey) {
		t.Fatal("an empty cache has the key")
	}
	if _, err := c.Get(s, testKey, fb.build, fb.load); err != nil {
		t.Fatal(err)
	}
	if !c.Has(s, testKey) {
		t.Error("a built artifact is not had")
	}
	if !(&Cache[*artifact]{}).Has(s, testKey) {
		t.Error("a new process does not see the stored file")
	}
	dir, _ := s.Dir()
	os.WriteFile(s.FileName(dir, testKey), []byte("short"), 0o644)
	if s.Has(testKey) {
		t.Error("a file shorter than the header counts as stored")
	}
	if fb.builds.Load() != 1 {
		t.Errorf("Has built: %d builds", fb.builds.Load())
	}
	other := Key{1}
	if n := c.Missing(s, []Key{testKey, other, other}); n != 1 {
		t.Errorf("Missing: %d, want 1 (the other key, once)", n)
	}
	var none *Cache[*artifact] // no device open: the store alone
	if n := none.Missing(s, []Key{testKey, other}); n != 2 {
		t.Errorf("Missing with nothing in memory and a damaged file: %d, want 2", n)
	}
}
