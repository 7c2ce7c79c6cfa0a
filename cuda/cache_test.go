package cuda

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestModuleKeyMatchesOracle compares the key with testdata/cache_keys.json,
// written by cache_fixtures.py from the documented format.
func TestModuleKeyMatchesOracle(t *testing.T) {
	data, err := os.ReadFile("testdata/cache_keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Source  string
		Options []string
		Arch    string
		NVRTC   string
		Driver  int
		Key     string
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for i, c := range cases {
		major, minor, _ := strings.Cut(c.NVRTC, ".")
		var v Version
		v.Major, _ = strconv.Atoi(major)
		v.Minor, _ = strconv.Atoi(minor)
		if got := moduleKeyOf(c.Source, c.Options, c.Arch, v, c.Driver).String(); got != c.Key {
			t.Errorf("case %d: key %s, oracle %s", i, got, c.Key)
		}
	}
}

func TestCompileOptions(t *testing.T) {
	got := compileOptions("sm_90", []string{"TILE=16", "-lineinfo", "KW=5", "BORDER"})
	want := []string{"--gpu-architecture=sm_90", "-DBORDER", "-DKW=5", "-DTILE=16", "-lineinfo"}
	if !slices.Equal(got, want) {
		t.Errorf("compileOptions = %q, want %q", got, want)
	}
	if got := compileOptions("sm_80", nil); !slices.Equal(got, []string{"--gpu-architecture=sm_80"}) {
		t.Errorf("no defines: %q", got)
	}
}

// TestModuleKeyInputs: the defines' order does not matter; every input
// does.
func TestModuleKeyInputs(t *testing.T) {
	v := Version{13, 0}
	key := func(src string, defines []string, arch string, nv Version, drv int) moduleKey {
		return moduleKeyOf(src, compileOptions(arch, defines), arch, nv, drv)
	}
	base := key("src", []string{"A=1", "B=2"}, "sm_90", v, 13000)
	if key("src", []string{"B=2", "A=1"}, "sm_90", v, 13000) != base {
		t.Error("the defines' order changes the key")
	}
	variants := map[string]moduleKey{
		"source":  key("src ", []string{"A=1", "B=2"}, "sm_90", v, 13000),
		"define":  key("src", []string{"A=1", "B=3"}, "sm_90", v, 13000),
		"extra":   key("src", []string{"A=1", "B=2", "-lineinfo"}, "sm_90", v, 13000),
		"arch":    key("src", []string{"A=1", "B=2"}, "sm_89", v, 13000),
		"nvrtc":   key("src", []string{"A=1", "B=2"}, "sm_90", Version{13, 1}, 13000),
		"driver":  key("src", []string{"A=1", "B=2"}, "sm_90", v, 13010),
		"split":   key("src", []string{"A=1B=2"}, "sm_90", v, 13000),
		"missing": key("src", []string{"A=1"}, "sm_90", v, 13000),
	}
	for name, k := range variants {
		if k == base {
			t.Errorf("changing the %s leaves the key unchanged", name)
		}
	}
}

var testKey = moduleKeyOf("test", []string{"--gpu-architecture=sm_90"}, "sm_90", Version{13, 0}, 13000)

func TestCacheFileFormat(t *testing.T) {
	// The sample written by cache_fixtures.py decodes to its image.
	file, err := os.ReadFile("testdata/sample_cache_file.bin")
	if err != nil {
		t.Fatal(err)
	}
	image, err := os.ReadFile("testdata/sample_cache_image.bin")
	if err != nil {
		t.Fatal(err)
	}
	key := oracleKey(t, 0)
	got, err := decodeCacheFile(key, file)
	if err != nil || !bytes.Equal(got, image) {
		t.Fatalf("decoding the oracle's file: %v (image equal: %v)", err, bytes.Equal(got, image))
	}
	if enc := encodeCacheFile(key, image); !bytes.Equal(enc, file) {
		t.Error("encodeCacheFile differs from the oracle's file")
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

// oracleKey is key i of testdata/cache_keys.json.
func oracleKey(tb testing.TB, i int) moduleKey {
	tb.Helper()
	var cases []struct{ Key string }
	data, err := os.ReadFile("testdata/cache_keys.json")
	if err == nil {
		err = json.Unmarshal(data, &cases)
	}
	if err != nil || len(cases) <= i {
		tb.Fatalf("testdata/cache_keys.json: %v", err)
	}
	var k moduleKey
	if b, err := hex.DecodeString(cases[i].Key); err != nil || len(b) != len(k) {
		tb.Fatalf("bad key %q", cases[i].Key)
	} else {
		copy(k[:], b)
	}
	return k
}

// TestCacheFileDamage: every kind of damage is recognised.
func TestCacheFileDamage(t *testing.T) {
	image := []byte("\x7fELF not really a cubin, but bytes all the same")
	good := encodeCacheFile(testKey, image)
	if got, err := decodeCacheFile(testKey, good); err != nil || !bytes.Equal(got, image) {
		t.Fatalf("round trip: %v", err)
	}
	damaged := map[string][]byte{
		"empty":       {},
		"header only": good[:cacheHeaderSize],
		"truncated":   good[:len(good)-1],
		"half header": good[:cacheHeaderSize/2],
		"extended":    append(slices.Clone(good), 0),
		"empty image": encodeCacheFile(testKey, nil)[:cacheHeaderSize-1],
		"other key":   encodeCacheFile(moduleKeyOf("other", nil, "sm_90", Version{13, 0}, 13000), image),
		"garbage":     bytes.Repeat([]byte{0xa5}, len(good)),
		"zero-filled": make([]byte, len(good)),
		"huge length": func() []byte { b := slices.Clone(good); b[len(cacheMagic)+32+7] = 0xff; return b }(),
	}
	for _, region := range []struct {
		name string
		at   int
	}{{"magic", 0}, {"key", 8}, {"length", 40}, {"sum", 48}, {"image", cacheHeaderSize}, {"last byte", len(good) - 1}} {
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
	// An empty image is valid as a file (the driver refuses it later).
	if got, err := decodeCacheFile(testKey, encodeCacheFile(testKey, nil)); err != nil || len(got) != 0 {
		t.Errorf("empty image: %v", err)
	}
}

func TestCacheFilesOnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cuda")
	if _, err := readCacheFile(dir, testKey); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	image := []byte("cubin bytes")
	if err := writeCacheFile(dir, testKey, image); err != nil {
		t.Fatal(err)
	}
	if got, err := readCacheFile(dir, testKey); err != nil || !bytes.Equal(got, image) {
		t.Fatalf("read back: %q, %v", got, err)
	}
	path := cacheFileName(dir, testKey)
	if filepath.Base(path) != testKey.String()+".cubin" {
		t.Errorf("file name %s", path)
	}
	// Truncated on disk: recognised.
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data[:len(data)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *cacheFileError
	if _, err := readCacheFile(dir, testKey); !errors.As(err, &ce) {
		t.Errorf("truncated file: %v", err)
	}
	// Rewriting replaces it.
	if err := writeCacheFile(dir, testKey, image); err != nil {
		t.Fatal(err)
	}
	if _, err := readCacheFile(dir, testKey); err != nil {
		t.Errorf("after rewrite: %v", err)
	}
}

// TestConcurrentCacheWriters: writers racing on one key (as several
// processes may) each install a whole file, and leave no temporary behind.
func TestConcurrentCacheWriters(t *testing.T) {
	dir := t.TempDir()
	images := make([][]byte, 8)
	for i := range images {
		images[i] = bytes.Repeat([]byte{byte('a' + i)}, 100_000+i)
	}
	for round := 0; round < 5; round++ {
		together(len(images), func(i int) {
			if err := writeCacheFile(dir, testKey, images[i]); err != nil {
				t.Error(err)
			}
			if got, err := readCacheFile(dir, testKey); err != nil || !slices.ContainsFunc(images, func(im []byte) bool { return bytes.Equal(im, got) }) {
				t.Errorf("a reader saw a partial file: %v", err)
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want the one cache file", names)
	}
}

func TestClearCache(t *testing.T) {
	root := t.TempDir()
	t.Setenv("NDCONV_CACHE_DIR", root)
	dir, err := CacheDir()
	if err != nil || dir != filepath.Join(root, "cuda") {
		t.Fatalf("CacheDir = %q, %v", dir, err)
	}
	if err := ClearCache(); err != nil { // no directory yet
		t.Errorf("ClearCache on nothing: %v", err)
	}
	if err := writeCacheFile(dir, testKey, []byte("x")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".tmp-123.cubin"), []byte("left by a crash"), 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte("not ours"), 0o644)
	if err := ClearCache(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "README" {
		t.Errorf("after ClearCache: %v", entries)
	}
}

// fakeBuilder stands in for NVRTC and the driver: it counts compilations,
// and its loader refuses images that are not ones it compiled, as the
// driver refuses a damaged CUBIN.
type fakeBuilder struct {
	compiles atomic.Int64
	delay    time.Duration
	fail     bool
}

func (f *fakeBuilder) compile() ([]byte, error) {
	f.compiles.Add(1)
	time.Sleep(f.delay)
	if f.fail {
		return nil, errors.New("compile failed")
	}
	return []byte("CUBIN:good"), nil
}

func (f *fakeBuilder) load(image []byte) (*Module, error) {
	if !bytes.HasPrefix(image, []byte("CUBIN:")) {
		return nil, &Error{Call: "cuModuleLoadData", Code: CodeInvalidImage, Name: "CUDA_ERROR_INVALID_IMAGE"}
	}
	return &Module{}, nil
}

// TestModuleCacheLayers walks a key through cold, warm, a new process,
// a damaged file and a file the driver refuses, counting each step.
func TestModuleCacheLayers(t *testing.T) {
	t.Setenv("NDCONV_CACHE_DIR", t.TempDir())
	dir, _ := CacheDir()
	fb := &fakeBuilder{}
	want := func(c *moduleCache, step string, s CacheStats) {
		t.Helper()
		if got := c.snapshot(); got != s {
			t.Errorf("%s: stats %+v, want %+v", step, got, s)
		}
	}

	c := &moduleCache{}
	m1, err := c.get(testKey, fb.compile, fb.load)
	if err != nil || m1 == nil || !m1.cached {
		t.Fatalf("cold: %v, %v", m1, err)
	}
	want(c, "cold", CacheStats{Compiles: 1, DiskWrites: 1})
	m2, _ := c.get(testKey, fb.compile, fb.load)
	if m2 != m1 {
		t.Error("warm: another module")
	}
	want(c, "warm", CacheStats{MemoryHits: 1, Compiles: 1, DiskWrites: 1})

	c = &moduleCache{} // a new process: only the disk remembers
	if _, err := c.get(testKey, fb.compile, fb.load); err != nil {
		t.Fatal(err)
	}
	want(c, "disk", CacheStats{DiskHits: 1})

	path := cacheFileName(dir, testKey)
	data, _ := os.ReadFile(path)
	data[len(data)-1] ^= 0xff
	os.WriteFile(path, data, 0o644)
	c = &moduleCache{}
	if _, err := c.get(testKey, fb.compile, fb.load); err != nil {
		t.Fatal(err)
	}
	want(c, "damaged file", CacheStats{Compiles: 1, DiskWrites: 1, Rejected: 1})
	if _, err := readCacheFile(dir, testKey); err != nil {
		t.Errorf("the damaged file was not replaced: %v", err)
	}

	// A file whose checksum holds but whose CUBIN the driver refuses.
	os.WriteFile(path, encodeCacheFile(testKey, []byte("garbage")), 0o644)
	c = &moduleCache{}
	if _, err := c.get(testKey, fb.compile, fb.load); err != nil {
		t.Fatal(err)
	}
	want(c, "refused file", CacheStats{Compiles: 1, DiskWrites: 1, Rejected: 1})
	if got, _ := readCacheFile(dir, testKey); string(got) != "CUBIN:good" {
		t.Errorf("the refused file was not replaced: %q", got)
	}
	if fb.compiles.Load() != 3 {
		t.Errorf("%d compilations in all, want 3", fb.compiles.Load())
	}
}

func TestModuleCacheFailuresAreNotKept(t *testing.T) {
	t.Setenv("NDCONV_CACHE_DIR", t.TempDir())
	fb := &fakeBuilder{fail: true}
	c := &moduleCache{}
	for i := 0; i < 2; i++ {
		if m, err := c.get(testKey, fb.compile, fb.load); err == nil || m != nil {
			t.Fatalf("failing compile returned %v, %v", m, err)
		}
	}
	if fb.compiles.Load() != 2 {
		t.Errorf("a failure was remembered: %d compilations for 2 calls", fb.compiles.Load())
	}
	fb.fail = false
	if _, err := c.get(testKey, fb.compile, fb.load); err != nil {
		t.Errorf("after the failure: %v", err)
	}
}

// TestModuleCacheUnusableDir: a cache directory that cannot be made costs
// the caching, not the module.
func TestModuleCacheUnusableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, nil, 0o644)
	t.Setenv("NDCONV_CACHE_DIR", file) // CacheDir is file/cuda: cannot exist
	fb := &fakeBuilder{}
	c := &moduleCache{}
	if _, err := c.get(testKey, fb.compile, fb.load); err != nil {
		t.Fatal(err)
	}
	if s := c.snapshot(); s.Compiles != 1 || s.DiskErrors != 1 || s.DiskWrites != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestModuleCacheCompilesOnce: many goroutines asking for one key at once
// share one compilation and one module.
func TestModuleCacheCompilesOnce(t *testing.T) {
	t.Setenv("NDCONV_CACHE_DIR", t.TempDir())
	fb := &fakeBuilder{delay: 50 * time.Millisecond}
	c := &moduleCache{}
	const n = 16
	mods := make([]*Module, n)
	together(n, func(i int) {
		m, err := c.get(testKey, fb.compile, fb.load)
		if err != nil {
			t.Error(err)
		}
		mods[i] = m
	})
	if fb.compiles.Load() != 1 {
		t.Errorf("%d compilations, want 1", fb.compiles.Load())
	}
	for _, m := range mods {
		if m != mods[0] || m == nil {
			t.Fatal("callers got different modules")
		}
	}
	if s := c.snapshot(); s.MemoryHits != n-1 {
		t.Errorf("stats %+v, want %d memory hits", s, n-1)
	}
	if got := c.drain(); len(got) != 1 || got[0] != mods[0] {
		t.Errorf("drain = %v", got)
	}
}
