package opencl

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
	"strings"
	"sync"
	"sync/atomic"
)

// programKey names one build: the SHA-256 of everything its binary
// depends on.
type programKey [sha256.Size]byte

func (k programKey) String() string { return hex.EncodeToString(k[:]) }

// cacheFormat is hashed into every key: change it when the key's inputs or
// the file layout change, and old files are simply never found again.
const cacheFormat = "ndconv-opencl-program-1"

// programKeyOf hashes each input with its length, so that no two different
// input lists hash the same bytes. The device is named by its platform,
// its own name and version and its driver's version: a driver update or
// another device of the same name on another platform is another key.
func programKeyOf(source, options string, info Info) programKey {
	h := sha256.New()
	field := func(tag, value string) {
		fmt.Fprintf(h, "%s %d\n%s\n", tag, len(value), value)
	}
	field("format", cacheFormat)
	field("platform", info.PlatformName)
	field("platform-version", info.PlatformVersion)
	field("device", info.Name)
	field("device-version", info.Version)
	field("driver", info.DriverVersion)
	field("options", options)
	field("source", source)
	var k programKey
	h.Sum(k[:0])
	return k
}

// programCache is one device's programs by key, with the counters tests
// and benchmarks read.
type programCache struct {
	mu      sync.Mutex
	entries map[programKey]*cacheEntry
	stats   struct{ memoryHits, diskHits, builds, diskWrites, rejected, diskErrors atomic.Int64 }
}

// cacheEntry is a program being built (ready open) or built.
type cacheEntry struct {
	ready chan struct{}
	prog  *Program
	err   error
}

// CacheStats counts a device's program cache traffic since Open.
type CacheStats struct {
	MemoryHits int64 // Program calls answered by a program already built (or being built)
	DiskHits   int64 // answered by a binary from the disk cache
	Builds     int64 // builds from source
	DiskWrites int64 // binaries written to the disk cache
	Rejected   int64 // cache files ignored: damaged, or refused by the driver
	DiskErrors int64 // the cache directory could not be used (building still worked)
}

// CacheStats returns the device's program cache counters.
func (d *Device) CacheStats() CacheStats { return d.programs.snapshot() }

func (c *programCache) snapshot() CacheStats {
	s := &c.stats
	return CacheStats{s.memoryHits.Load(), s.diskHits.Load(), s.builds.Load(), s.diskWrites.Load(), s.rejected.Load(), s.diskErrors.Load()}
}

// get returns the program for key, building it at most once however many
// goroutines ask at the same time: from a binary in the disk cache where
// there is a good one (load), else from source (compile, which also returns
// the binary to store). A failed build is not remembered: the next call
// tries again.
func (c *programCache) get(key programKey, compile func() (*Program, []byte, error), load func([]byte) (*Program, error)) (*Program, error) {
	c.mu.Lock()
	if e := c.entries[key]; e != nil {
		c.mu.Unlock()
		<-e.ready
		if e.err == nil {
			c.stats.memoryHits.Add(1)
		}
		return e.prog, e.err
	}
	e := &cacheEntry{ready: make(chan struct{})}
	if c.entries == nil {
		c.entries = map[programKey]*cacheEntry{}
	}
	c.entries[key] = e
	c.mu.Unlock()

	e.prog, e.err = c.build(key, compile, load)
	if e.err != nil {
		c.mu.Lock()
		delete(c.entries, key)
		c.mu.Unlock()
	}
	close(e.ready)
	return e.prog, e.err
}

// build loads the binary for key from the disk cache, or compiles and
// stores it there. A cache file that fails its checksum, or that the
// driver refuses, counts as rejected and is replaced. A cache directory
// that cannot be used costs only the caching.
func (c *programCache) build(key programKey, compile func() (*Program, []byte, error), load func([]byte) (*Program, error)) (*Program, error) {
	dir, dirErr := CacheDir()
	if dirErr == nil {
		binary, err := readCacheFile(dir, key)
		switch {
		case err == nil:
			if p, err := load(binary); err == nil {
				c.stats.diskHits.Add(1)
				return p, nil
			}
			c.stats.rejected.Add(1)
		case !errors.Is(err, fs.ErrNotExist):
			c.stats.rejected.Add(1)
		}
	} else {
		c.stats.diskErrors.Add(1)
	}

	c.stats.builds.Add(1)
	p, binary, err := compile()
	if err != nil {
		return nil, err
	}
	if dirErr == nil && len(binary) > 0 {
		if err := writeCacheFile(dir, key, binary); err != nil {
			c.stats.diskErrors.Add(1)
		} else {
			c.stats.diskWrites.Add(1)
		}
	}
	return p, nil
}

// drain empties the cache and returns its programs for the caller to
// release (Device.Close does).
func (c *programCache) drain() []*Program {
	c.mu.Lock()
	defer c.mu.Unlock()
	var progs []*Program
	for _, e := range c.entries {
		select {
		case <-e.ready:
			if e.prog != nil {
				progs = append(progs, e.prog)
			}
		default: // still building: Close waited for the operations in flight, so none is
		}
	}
	c.entries = nil
	return progs
}

// CacheDir is where program binaries are kept: $NDCONV_CACHE_DIR/opencl
// if that is set, else ndconv/opencl in the user's cache directory
// (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on Linux).
func CacheDir() (string, error) {
	if dir := lookupEnv("NDCONV_CACHE_DIR"); dir != "" {
		return filepath.Join(dir, "opencl"), nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "ndconv", "opencl"), nil
}

// ClearCache deletes the program binaries in CacheDir (and any temporary
// files left by an interrupted write). Programs already built stay built.
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

// A cache file is a header and the binary:
//
//	magic   8 bytes  "NDCLBIN\x01"
//	key     32 bytes the programKey it was stored under
//	length  8 bytes  little-endian length of the binary
//	sum     32 bytes SHA-256 of the binary
//	binary  length bytes
//
// so a truncated, extended, altered or misplaced file is recognised before
// the driver sees it.
const (
	cacheMagic       = "NDCLBIN\x01"
	cacheHeaderSize  = len(cacheMagic) + sha256.Size + 8 + sha256.Size
	cacheFileSuffix  = ".clbin"
	maxCacheFileSize = 1 << 30 // far above any program binary; bounds what a damaged file makes us read
)

func cacheFileName(dir string, key programKey) string {
	return filepath.Join(dir, key.String()+cacheFileSuffix)
}

// encodeCacheFile returns the cache file for binary stored under key.
func encodeCacheFile(key programKey, bin []byte) []byte {
	sum := sha256.Sum256(bin)
	b := make([]byte, 0, cacheHeaderSize+len(bin))
	b = append(b, cacheMagic...)
	b = append(b, key[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(bin)))
	b = append(b, sum[:]...)
	return append(b, bin...)
}

// cacheFileError is a cache file that is not what was stored.
type cacheFileError struct{ reason string }

func (e *cacheFileError) Error() string { return "opencl: damaged program cache file: " + e.reason }

// decodeCacheFile checks data against key and returns the binary in it.
func decodeCacheFile(key programKey, data []byte) ([]byte, error) {
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
	sum, bin := rest[:sha256.Size], rest[sha256.Size:]
	if n != uint64(len(bin)) {
		return nil, &cacheFileError{fmt.Sprintf("header says %d bytes of binary, file holds %d", n, len(bin))}
	}
	if got := sha256.Sum256(bin); !bytes.Equal(got[:], sum) {
		return nil, &cacheFileError{"checksum mismatch"}
	}
	return bin, nil
}

// readCacheFile returns the binary cached under key in dir: an error
// matching fs.ErrNotExist if there is none, a *cacheFileError if the file
// is damaged.
func readCacheFile(dir string, key programKey) ([]byte, error) {
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

// writeCacheFile stores bin under key in dir atomically: written to a
// temporary file in dir, then renamed over the final name, so that a
// reader (another process included) sees the old file, or no file, or the
// whole new one.
func writeCacheFile(dir string, key programKey, bin []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*"+cacheFileSuffix)
	if err != nil {
		return err
	}
	_, werr := tmp.Write(encodeCacheFile(key, bin))
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
