package zarr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// A Store holds a Zarr hierarchy as bytes under "/"-separated keys
// ("group/array/zarr.json", "group/array/c/0/0"). It is kept small and
// byte-oriented so that a directory, an object-storage bucket or memory
// can each be one. A Store must be safe for concurrent use, and the
// slices Get and GetRange return belong to the caller (who may change
// them).
type Store interface {
	// Get returns the whole value of key, or an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// GetRange returns n bytes of key from offset off; off < 0 asks for
	// the last n bytes (a shard's index at its end). A range that runs
	// past the value's end is an error (a *FormatError): a reader never
	// asks for bytes a value does not hold unless the value is corrupt.
	GetRange(ctx context.Context, key string, off, n int64) ([]byte, error)
	// Put stores data under key, whole or not at all: a reader never sees
	// half of a value, and a Put that fails leaves the old value.
	Put(ctx context.Context, key string, data []byte) error
	// List returns the keys under prefix (a key or a "/"-ended folder),
	// sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// Delete removes key; a key that is not there is no error.
	Delete(ctx context.Context, key string) error
}

// A ConcurrentStore is a Store whose requests wait on a network rather
// than on the machine's cores (object storage). Concurrency is how many
// requests it serves at once: ReadRegion keeps that many shards, and that
// many chunks of a shard read in part, in flight, where it would
// otherwise keep one per core. The Store bounds what it sends itself.
type ConcurrentStore interface {
	Store
	Concurrency() int
}

// readWorkers is how many reads of s to keep in flight: the store's
// Concurrency, else one per core (at least 4).
func readWorkers(s Store) int {
	if c, ok := s.(ConcurrentStore); ok && c.Concurrency() > 0 {
		return c.Concurrency()
	}
	return max(4, runtime.GOMAXPROCS(0))
}

// DirStore is a Store in a directory of the local file system: a key is a
// file's path relative to Root. Put writes a temporary file beside the
// key's and renames it into place.
type DirStore struct {
	Root string
}

// NewDirStore returns a Store over the directory root (which Put creates
// when needed).
func NewDirStore(root string) *DirStore { return &DirStore{Root: root} }

// path returns the file of key, refusing keys that would leave Root.
func (s *DirStore) path(key string) (string, error) {
	clean := path.Clean("/" + key)
	if key == "" || clean == "/" || strings.Contains(key, "\\") || clean != "/"+strings.TrimSuffix(key, "/") {
		return "", argErrorf("key", "%q is not a clean relative key", key)
	}
	return filepath.Join(s.Root, filepath.FromSlash(clean[1:])), nil
}

func notFound(key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	return err
}

// Get implements Store.
func (s *DirStore) Get(ctx context.Context, key string) ([]byte, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, notFound(key, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is a directory", ErrNotFound, key)
	}
	if fi.Size() > maxValueBytes {
		return nil, formatErrorf(key, nil, "%d bytes, more than the %d a value may hold", fi.Size(), int64(maxValueBytes))
	}
	b, err := os.ReadFile(p)
	return b, notFound(key, err)
}

// GetRange implements Store.
func (s *DirStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, notFound(key, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if off < 0 {
		off = size - n
	}
	if n < 0 || off < 0 || n > size-off || n > maxValueBytes {
		return nil, formatErrorf(key, nil, "holds %d bytes; bytes %d to %d were asked for", size, off, off+n)
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, formatErrorf(key, err, "reading bytes %d to %d", off, off+n)
	}
	return b, nil
}

// Put implements Store.
func (s *DirStore) Put(ctx context.Context, key string, data []byte) (err error) {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	p, err := s.path(key)
	if err != nil {
		return err
	}
	dir, name := filepath.Split(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}

// List implements Store. Temporary files of a Put under way are not
// listed.
func (s *DirStore) List(ctx context.Context, prefix string) ([]string, error) {
	root := s.Root
	if strings.Trim(prefix, "/") != "" {
		p, err := s.path(strings.TrimSuffix(prefix, "/"))
		if err != nil {
			return nil, err
		}
		root = p
	}
	var keys []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if err := context.Cause(ctx); err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") && strings.Contains(d.Name(), "-") && !isMetaName(d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(s.Root, p)
		if err != nil {
			return err
		}
		keys = append(keys, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(keys)
	return keys, err
}

// isMetaName reports whether a file name is one of Zarr v2's dot-files.
func isMetaName(name string) bool {
	switch name {
	case ".zarray", ".zgroup", ".zattrs", ".zmetadata":
		return true
	}
	return false
}

// Delete implements Store.
func (s *DirStore) Delete(ctx context.Context, key string) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
