package opencl

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var testInfo = Info{PlatformName: "Portable Computing Language", PlatformVersion: "OpenCL 3.0 PoCL 3.1", Name: "pthread-cpu", Version: "OpenCL 3.0 PoCL", DriverVersion: "3.1"}

var testKey = programKeyOf("test", "-DA=1", testInfo)

func TestBuildOptions(t *testing.T) {
	got, err := buildOptions([]string{"TILE=16", "-cl-std=CL1.2", "KW=5", "BORDER", "OUT_MIN=(-2147483647-1)"})
	want := "-DBORDER -DKW=5 -DOUT_MIN=(-2147483647-1) -DTILE=16 -cl-std=CL1.2"
	if err != nil || got != want {
		t.Errorf("buildOptions = %q, %v, want %q", got, err, want)
	}
	if got, err := buildOptions(nil); got != "" || err != nil {
		t.Errorf("no defines: %q, %v", got, err)
	}
	for _, bad := range []string{"A=1 2", "", "A=\"x\""} {
		if _, err := buildOptions([]string{bad}); err == nil {
			t.Errorf("define %q accepted", bad)
		}
	}
}

// TestProgramKeyInputs: the defines' order does not matter; every input
// does.
func TestProgramKeyInputs(t *testing.T) {
	key := func(src string, defines []string, info Info) programKey {
		opts, err := buildOptions(defines)
		if err != nil {
			t.Fatal(err)
		}
		return programKeyOf(src, opts, info)
	}
	base := key("src", []string{"A=1", "B=2"}, testInfo)
	if key("src", []string{"B=2", "A=1"}, testInfo) != base {
		t.Error("the defines' order changes the key")
	}
	with := func(f func(*Info)) Info {
		i := testInfo
		f(&i)
		return i
	}
	variants := map[string]programKey{
		"source":           key("src ", []string{"A=1", "B=2"}, testInfo),
		"define":           key("src", []string{"A=1", "B=3"}, testInfo),
		"extra":            key("src", []string{"A=1", "B=2", "-cl-std=CL1.2"}, testInfo),
		"missing":          key("src", []string{"A=1"}, testInfo),
		"platform":         key("src", []string{"A=1", "B=2"}, with(func(i *Info) { i.PlatformName = "NVIDIA CUDA" })),
		"platform version": key("src", []string{"A=1", "B=2"}, with(func(i *Info) { i.PlatformVersion = "OpenCL 3.0 PoCL 5.0" })),
		"device":           key("src", []string{"A=1", "B=2"}, with(func(i *Info) { i.Name = "other" })),
		"device version":   key("src", []string{"A=1", "B=2"}, with(func(i *Info) { i.Version = "OpenCL 1.2" })),
		"driver":           key("src", []string{"A=1", "B=2"}, with(func(i *Info) { i.DriverVersion = "3.2" })),
	}
	for name, k := range variants {
		if k == base {
			t.Errorf("changing the %s leaves the key unchanged", name)
		}
	}
	// The indices and limits are not part of the key: the same device
	// found at another index shares its binaries.
	if key("src", []string{"A=1", "B=2"}, with(func(i *Info) { i.Platform, i.Device, i.ComputeUnits = 3, 1, 64 })) != base {
		t.Error("the device's index changes the key")
	}
}

// TestCacheFileDamage: every kind of damage is recognised.
func TestCacheFileDamage(t *testing.T) {
	bin := []byte("\x7fELF not really a program binary, but bytes all the same")
	good := encodeCacheFile(testKey, bin)
	if got, err := decodeCacheFile(testKey, good); err != nil || !bytes.Equal(got, bin) {
		t.Fatalf("round trip: %v", err)
	}
	damaged := map[string][]byte{
		"empty":       {},
		"header only": good[:cacheHeaderSize],
		"truncated":   good[:len(good)-1],
		"half header": good[:cacheHeaderSize/2],
		"extended":    append(slices.Clone(good), 0),
		"other key":   encodeCacheFile(programKeyOf("other", "", testInfo), bin),
		"garbage":     bytes.Repeat([]byte{0xa5}, len(good)),
		"zero-filled": make([]byte, len(good)),
		"huge length": func() []byte { b := slices.Clone(good); b[len(cacheMagic)+32+7] = 0xff; return b }(),
		"cuda's file": append([]byte("NDCUBIN\x01"), good[8:]...),
	}
	for _, region := range []struct {
		name string
		at   int
	}{{"magic", 0}, {"key", 8}, {"length", 40}, {"sum", 48}, {"binary", cacheHeaderSize}, {"last byte", len(good) - 1}} {
		b := slices.Clone(good)
		b[region.at] ^= 0x01
		damaged["flipped "+region.name] = b
	}
	for name, data := range damaged {
		_, err := decodeCacheFile(testKey, data)
		var ce *cacheFileError
		if !errors.As(err, &ce) {
			t.Errorf("%s: decode = %v, want a *cacheFileError", name, err)
		}
	}
}

func TestCacheFilesOnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "opencl")
	if _, err := readCacheFile(dir, testKey); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	bin := []byte("program binary")
	if err := writeCacheFile(dir, testKey, bin); err != nil {
		t.Fatal(err)
	}
	if got, err := readCacheFile(dir, testKey); err != nil || !bytes.Equal(got, bin) {
		t.Fatalf("read back: %q, %v", got, err)
	}
	path := cacheFileName(dir, testKey)
	if filepath.Base(path) != testKey.String()+".clbin" {
		t.Errorf("file name %s", path)
	}
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data[:len(data)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *cacheFileError
	if _, err := readCacheFile(dir, testKey); !errors.As(err, &ce) {
		t.Errorf("truncated file: %v", err)
	}
	if err := writeCacheFile(dir, testKey, bin); err != nil {
		t.Fatal(err)
	}
	if _, err := readCacheFile(dir, testKey); err != nil {
		t.Errorf("after rewrite: %v", err)
	}
}

// together runs fn(0) … fn(n-1) on n goroutines released at the same
// moment, and waits for them all.
func together(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// TestConcurrentCacheWriters: writers racing on one key (as several
// processes may) each install a whole file, and leave no temporary behind.
func TestConcurrentCacheWriters(t *testing.T) {
	dir := t.TempDir()
	bins := make([][]byte, 8)
	for i := range bins {
		bins[i] = bytes.Repeat([]byte{byte('a' + i)}, 100_000+i)
	}
	for range 5 {
		together(len(bins), func(i int) {
			if err := writeCacheFile(dir, testKey, bins[i]); err != nil {
				t.Error(err)
			}
			if got, err := readCacheFile(dir, testKey); err != nil || !slices.ContainsFunc(bins, func(b []byte) bool { return bytes.Equal(b, got) }) {
				t.Errorf("a reader saw a partial file: %v", err)
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want the one cache file", len(entries))
	}
}

func TestClearCache(t *testing.T) {
	root := t.TempDir()
	t.Setenv("NDCONV_CACHE_DIR", root)
	dir, err := CacheDir()
	if err != nil || dir != filepath.Join(root, "opencl") {
		t.Fatalf("CacheDir = %q, %v", dir, err)
	}
	if err := ClearCache(); err != nil {
		t.Errorf("ClearCache on nothing: %v", err)
	}
	if err := writeCacheFile(dir, testKey, []byte("x")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".tmp-123.clbin"), []byte("left by a crash"), 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte("not ours"), 0o644)
	if err := ClearCache(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "README" {
		t.Errorf("after ClearCache: %v", entries)
	}
	t.Setenv("NDCONV_CACHE_DIR", "")
	if dir, err := CacheDir(); err == nil && filepath.Base(dir) != "opencl" {
		t.Errorf("default CacheDir = %q", dir)
	}
}

// fakeBuilder stands in for the OpenCL compiler: it counts builds, and its
// loader refuses binaries that are not ones it built, as a driver refuses
// a damaged binary.
type fakeBuilder struct {
	builds atomic.Int64
	delay  time.Duration
	fail   bool
}

func (f *fakeBuilder) compile() (*Program, []byte, error) {
	f.builds.Add(1)
	time.Sleep(f.delay)
	if f.fail {
		return nil, nil, &BuildError{Program: "fake", Err: &Error{Call: "clBuildProgram", Code: CodeBuildProgramFailure, Name: "CL_BUILD_PROGRAM_FAILURE"}}
	}
	return &Program{name: "built"}, []byte("BIN:good"), nil
}

func (f *fakeBuilder) load(bin []byte) (*Program, error) {
	if !bytes.HasPrefix(bin, []byte("BIN:")) {
		return nil, &Error{Call: "clCreateProgramWithBinary", Code: CodeInvalidBinary, Name: "CL_INVALID_BINARY"}
	}
	return &Program{name: "loaded"}, nil
}

// TestProgramCacheLayers walks a key through cold, warm, a new process, a
// damaged file and a file the driver refuses, counting each step.
func TestProgramCacheLayers(t *testing.T) {
	t.Setenv("NDCONV_CACHE_DIR", t.TempDir())
	dir, _ := CacheDir()
	fb := &fakeBuilder{}
	want := func(c *programCache, step string, s CacheStats) {
		t.Helper()
		if got := c.snapshot(); got != s {
			t.Errorf("%s: stats %+v, want %+v", step, got, s)
		}
	}

	c := &programCache{}
	p1, err := c.get(testKey, fb.compile, fb.load)
	if err != nil || p1 == nil || p1.name != "built" {
		t.Fatalf("cold: %v, %v", p1, err)
	}
	want(c, "cold", CacheStats{Builds: 1, DiskWrites: 1})
	if p2, _ := c.get(testKey, fb.compile, fb.load); p2 != p1 {
		t.Error("warm: another program")
	}
	want(c, "warm", CacheStats{MemoryHits: 1, Builds: 1, DiskWrites: 1})

	c = &programCache{} // a new process: only the disk remembers
	if p, err := c.get(testKey, fb.compile, fb.load); err != nil || p.name != "loaded" {
		t.Fatal(p, err)
	}
	want(c, "disk", CacheStats{DiskHits: 1})

	path := cacheFileName(dir, testKey)
	data, _ := os.ReadFile(path)
	data[len(data)-1] ^= 0xff
	os.WriteFile(path, data, 0o644)
	c = &programCache{}
	if _, err := c.get(testKey, fb.compile, fb.load); err != nil {
		t.Fatal(err)
	}
	want(c, "damaged file", CacheStats{Builds: 1, DiskWrites: 1, Rejected: 1})
	if _, err := readCacheFile(dir, testKey); err != nil {
		t.Errorf("the damaged file was not replaced: %v", err)
	}

	// A file whose checksum holds but whose binary the driver refuses.
	os.WriteFile(path, encodeCacheFile(testKey, []byte("garbage")), 0o644)
	c = &programCache{}
	if _, err := c.get(testKey, fb.compile, fb.load); err != nil {
		t.Fatal(err)
	}
	want(c, "refused file", CacheStats{Builds: 1, DiskWrites: 1, Rejected: 1})
	if got, _ := readCacheFile(dir, testKey); string(got) != "BIN:good" {
		t.Errorf("the refused file was not replaced: %q", got)
	}
	if fb.builds.Load() != 3 {
		t.Errorf("%d builds in all, want 3", fb.builds.Load())
	}
}

func TestProgramCacheFailuresAreNotKept(t *testing.T) {
	t.Setenv("NDCONV_CACHE_DIR", t.TempDir())
	fb := &fakeBuilder{fail: true}
	c := &programCache{}
	for range 2 {
		if p, err := c.get(testKey, fb.compile, fb.load); err == nil || p != nil {
			t.Fatalf("failing build returned %v, %v", p, err)
		}
	}
	if fb.builds.Load() != 2 {
		t.Errorf("a failure was remembered: %d builds for 2 calls", fb.builds.Load())
	}
	fb.fail = false
	if _, err := c.get(testKey, fb.compile, fb.load); err != nil {
		t.Errorf("after the failure: %v", err)
	}
}

// TestProgramCacheUnusableDir: a cache directory that cannot be made costs
// the caching, not the program.
func TestProgramCacheUnusableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, nil, 0o644)
	t.Setenv("NDCONV_CACHE_DIR", file) // CacheDir is file/opencl: cannot exist
	fb := &fakeBuilder{}
	c := &programCache{}
	if _, err := c.get(testKey, fb.compile, fb.load); err != nil {
		t.Fatal(err)
	}
	if s := c.snapshot(); s.Builds != 1 || s.DiskErrors != 1 || s.DiskWrites != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestProgramCacheBuildsOnce: many goroutines asking for one key at once
// share one build and one program.
func TestProgramCacheBuildsOnce(t *testing.T) {
	t.Setenv("NDCONV_CACHE_DIR", t.TempDir())
	fb := &fakeBuilder{delay: 50 * time.Millisecond}
	c := &programCache{}
	const n = 16
	progs := make([]*Program, n)
	together(n, func(i int) {
		p, err := c.get(testKey, fb.compile, fb.load)
		if err != nil {
			t.Error(err)
		}
		progs[i] = p
	})
	if fb.builds.Load() != 1 {
		t.Errorf("%d builds, want 1", fb.builds.Load())
	}
	for _, p := range progs {
		if p != progs[0] || p == nil {
			t.Fatal("callers got different programs")
		}
	}
	if s := c.snapshot(); s.MemoryHits != n-1 {
		t.Errorf("stats %+v, want %d memory hits", s, n-1)
	}
	if got := c.drain(); len(got) != 1 || got[0] != progs[0] {
		t.Errorf("drain = %v", got)
	}
}
