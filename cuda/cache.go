package cuda

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Module returns the kernels of source compiled for this device with
// defines, compiling only when neither this process nor the disk cache
// has them. Each define is NAME or NAME=VALUE (passed as -DNAME=VALUE); an
// entry starting with "-" is passed to NVRTC as an option as it is. name
// is the program's name in NVRTC's messages.
//
// Modules are cached in memory per device (all callers share one *Module,
// which stays loaded until the device's last Close) and on disk under
// CacheDir, keyed by the SHA-256 of the source, the sorted defines and
// options, the architecture and the NVRTC and driver versions. Concurrent
// calls for one key compile once; the others wait for it. A damaged cache
// file is ignored, and replaced by a fresh compilation.
func (d *Device) Module(source, name string, defines []string) (*Module, error) {
	nvrtcVer, err := nvrtcVersion()
	if err != nil {
		return nil, err
	}
	arch := d.info.ComputeCapability.Arch()
	options := compileOptions(arch, defines)
	key := moduleKeyOf(source, options, arch, nvrtcVer, driver.version)
	return d.modules.get(key,
		func() ([]byte, error) { return compile(source, name, options) },
		d.LoadModule)
}

// compileOptions is the NVRTC command line for arch and defines: the
// architecture, then the defines and options sorted, so that the same set
// in another order is the same compilation and the same cache key.
func compileOptions(arch string, defines []string) []string {
	opts := make([]string, 0, len(defines)+1)
	for _, d := range defines {
		if !strings.HasPrefix(d, "-") {
			d = "-D" + d
		}
		opts = append(opts, d)
	}
	slices.Sort(opts)
	return append([]string{"--gpu-architecture=" + arch}, opts...)
}

// moduleKey names one compilation: the SHA-256 of everything its CUBIN
// depends on.
type moduleKey [sha256.Size]byte

func (k moduleKey) String() string { return hex.EncodeToString(k[:]) }

// cacheFormat is hashed into every key: change it when the key's inputs or
// the file layout change, and old files are simply never found again.
const cacheFormat = "ndconv-cuda-module-1"

// moduleKeyOf hashes each input with its length, so that no two different
// input lists hash the same bytes.
func moduleKeyOf(source string, options []string, arch string, nvrtc Version, driverVersion int) moduleKey {
	h := sha256.New()
	field := func(tag, value string) {
		fmt.Fprintf(h, "%s %d\n%s\n", tag, len(value), value)
	}
	field("format", cacheFormat)
	field("arch", arch)
	field("nvrtc", nvrtc.String())
	field("driver", strconv.Itoa(driverVersion))
	for _, o := range options {
		field("option", o)
	}
	field("source", source)
	var k moduleKey
	h.Sum(k[:0])
	return k
}

// moduleCache is one device's modules by key, with the counters tests and
// benchmarks read.
type moduleCache struct {
	mu      sync.Mutex
	entries map[moduleKey]*cacheEntry
	stats   struct{ memoryHits, diskHits, compiles, diskWrites, rejected, diskErrors atomic.Int64 }
}

// cacheEntry is a module being built (ready open) or built.
type cacheEntry struct {
	ready chan struct{}
	mod   *Module
	err   error
}

// CacheStats counts a device's module cache traffic since Open.
type CacheStats struct {
	MemoryHits int64 // Module calls answered by a module already loaded (or being built)
	DiskHits   int64 // answered by a CUBIN read from the disk cache
	Compiles   int64 // NVRTC compilations
	DiskWrites int64 // CUBINs written to the disk cache
	Rejected   int64 // cache files ignored: damaged, or refused by the driver
	DiskErrors int64 // the cache directory could not be used (compiling still worked)
}

// CacheStats returns the device's module cache counters.
func (d *Device) CacheStats() CacheStats { return d.modules.snapshot() }

func (c *moduleCache) snapshot() CacheStats {
	s := &c.stats
	return CacheStats{s.memoryHits.Load(), s.diskHits.Load(), s.compiles.Load(), s.diskWrites.Load(), s.rejected.Load(), s.diskErrors.Load()}
}

// get returns the module for key, building it with compile and load at
// most once however many goroutines ask at the same time. A failed build
// is not remembered: the next call tries again.
func (c *moduleCache) get(key moduleKey, compile func() ([]byte, error), load func([]byte) (*Module, error)) (*Module, error) {
	c.mu.Lock()
	if e := c.entries[key]; e != nil {
		c.mu.Unlock()
		<-e.ready
		if e.err == nil {
			c.stats.memoryHits.Add(1)
		}
		return e.mod, e.err
	}
	e := &cacheEntry{ready: make(chan struct{})}
	if c.entries == nil {
		c.entries = map[moduleKey]*cacheEntry{}
	}
	c.entries[key] = e
	c.mu.Unlock()

	e.mod, e.err = c.build(key, compile, load)
	if e.err != nil {
		c.mu.Lock()
		delete(c.entries, key)
		c.mu.Unlock()
	} else {
		e.mod.cached = true
	}
	close(e.ready)
	return e.mod, e.err
}

// build loads the CUBIN for key from the disk cache, or compiles it and
// stores it there. A cache file that fails its checksum, or that the driver
// refuses, counts as rejected and is replaced. A cache directory that
// cannot be used costs only the caching.
func (c *moduleCache) build(key moduleKey, compile func() ([]byte, error), load func([]byte) (*Module, error)) (*Module, error) {
	dir, dirErr := CacheDir()
	if dirErr == nil {
		image, err := readCacheFile(dir, key)
		switch {
		case err == nil:
			if m, err := load(image); err == nil {
				c.stats.diskHits.Add(1)
				return m, nil
			}
			c.stats.rejected.Add(1)
		case !errors.Is(err, fs.ErrNotExist):
			c.stats.rejected.Add(1)
		}
	} else {
		c.stats.diskErrors.Add(1)
	}

	c.stats.compiles.Add(1)
	image, err := compile()
	if err != nil {
		return nil, err
	}
	m, err := load(image)
	if err != nil {
		return nil, err
	}
	if dirErr == nil {
		if err := writeCacheFile(dir, key, image); err != nil {
			c.stats.diskErrors.Add(1)
		} else {
			c.stats.diskWrites.Add(1)
		}
	}
	return m, nil
}

// drain empties the cache and returns its modules for the caller to
// unload (Close does, with the context current).
func (c *moduleCache) drain() []*Module {
	c.mu.Lock()
	defer c.mu.Unlock()
	var mods []*Module
	for _, e := range c.entries {
		select {
		case <-e.ready:
			if e.mod != nil {
				mods = append(mods, e.mod)
			}
		default: // still building: Close waited for the operations in flight, so none is
		}
	}
	c.entries = nil
	return mods
}

// CacheDir is where compiled modules are kept: $NDCONV_CACHE_DIR/cuda if
// that is set, else ndconv/cuda in the user's cache directory
// (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on Linux).
func CacheDir() (string, error) {
	if dir := lookupEnv("NDCONV_CACHE_DIR"); dir != "" {
		return filepath.Join(dir, "cuda"), nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "ndconv", "cuda"), nil
}

// ClearCache deletes the compiled modules in CacheDir (and any temporary
// files left by an interrupted write). Modules already loaded stay loaded.
func ClearCache() error {
	dir, err := CacheDir()
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), cacheFileSuffix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// A cache file is a header and the CUBIN:
//
//	magic   8 bytes  "NDCUBIN\x01"
//	key     32 bytes the moduleKey it was stored under
//	length  8 bytes  little-endian length of the CUBIN
//	sum     32 bytes SHA-256 of the CUBIN
//	CUBIN   length bytes
//
// so a truncated, extended, altered or misplaced file is recognised before
// the driver sees it.
const (
	cacheMagic       = "NDCUBIN\x01"
	cacheHeaderSize  = len(cacheMagic) + sha256.Size + 8 + sha256.Size
	cacheFileSuffix  = ".cubin"
	maxCacheFileSize = 1 << 30 // far above any CUBIN; bounds what a damaged file makes us read
)

func cacheFileName(dir string, key moduleKey) string {
	return filepath.Join(dir, key.String()+cacheFileSuffix)
}

// encodeCacheFile returns the cache file for image stored under key.
func encodeCacheFile(key moduleKey, image []byte) []byte {
	sum := sha256.Sum256(image)
	b := make([]byte, 0, cacheHeaderSize+len(image))
	b = append(b, cacheMagic...)
	b = append(b, key[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(image)))
	b = append(b, sum[:]...)
	return append(b, image...)
}

// cacheFileError is a cache file that is not what was stored.
type cacheFileError struct{ reason string }

func (e *cacheFileError) Error() string { return "cuda: damaged module cache file: " + e.reason }

// decodeCacheFile checks data against key and returns the CUBIN in it.
func decodeCacheFile(key moduleKey, data []byte) ([]byte, error) {
	if len(data) < cacheHeaderSize {
		return nil, &cacheFileError{fmt.Sprintf("%d bytes, shorter than the %d-byte header", len(data), cacheHeaderSize)}
	}
	if string(data[:len(cacheMagic)]) != cacheMagic {
		return nil, &cacheFileError{"bad magic"}
	}
	rest := data[len(cacheMagic):]
	if !bytes.Equal(rest[:sha256.Size], key[:]) {
		return nil, &cacheFileError{"stored under another key"}
	}
	rest = rest[sha256.Size:]
	n := binary.LittleEndian.Uint64(rest)
	rest = rest[8:]
	sum, image := rest[:sha256.Size], rest[sha256.Size:]
	if n != uint64(len(image)) {
		return nil, &cacheFileError{fmt.Sprintf("header says %d bytes of CUBIN, file holds %d", n, len(image))}
	}
	if got := sha256.Sum256(image); !bytes.Equal(got[:], sum) {
		return nil, &cacheFileError{"checksum mismatch"}
	}
	return image, nil
}

// readCacheFile returns the CUBIN cached under key in dir: an error
// matching fs.ErrNotExist if there is none, a *cacheFileError if the file
// is damaged.
func readCacheFile(dir string, key moduleKey) ([]byte, error) {
	path := cacheFileName(dir, key)
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxCacheFileSize {
		return nil, &cacheFileError{fmt.Sprintf("%d bytes, too large", fi.Size())}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeCacheFile(key, data)
}

// writeCacheFile stores image under key in dir atomically: written to a
// temporary file in dir, then renamed over the final name, so that a
// reader (another process included) sees the old file, or no file, or the
// whole new one, and concurrent writers of one key each install a whole
// file.
func writeCacheFile(dir string, key moduleKey, image []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*"+cacheFileSuffix)
	if err != nil {
		return err
	}
	_, werr := tmp.Write(encodeCacheFile(key, image))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), cacheFileName(dir, key)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
