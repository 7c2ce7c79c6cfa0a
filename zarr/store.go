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
	"strconv"
	"strings"
	"time"
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
// key's (".NAME-PID@HOST-RANDOM", which List skips) and renames it into
// place; RemoveStale removes those that a writer killed before its rename
// left.
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
	return s.getRangeInto(ctx, key, off, n, nil)
}

// getRangeInto is GetRange reading into buf where it holds n bytes (a
// new buffer otherwise).
func (s *DirStore) getRangeInto(ctx context.Context, key string, off, n int64, buf []byte) ([]byte, error) {
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
	b := buf
	if int64(len(b)) != n {
		b = make([]byte, n)
	}
	if _, err := f.ReadAt(b, off); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, formatErrorf(key, err, "reading bytes %d to %d", off, off+n)
	}
	return b, nil
}

// Put implements Store.
func (s *DirStore) Put(ctx context.Context, key string, data []byte) error {
	return s.putPieces(ctx, key, [][]byte{data})
}

// putPieces stores the concatenation of pieces under key, as Put does,
// without needing it in one buffer; it is done with the pieces when it
// returns. A shard is written this way from its encoded chunks.
func (s *DirStore) putPieces(ctx context.Context, key string, pieces [][]byte) (err error) {
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
	f, err := os.CreateTemp(dir, "."+name+"-"+writerTag+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	for _, p := range pieces {
		if _, err := f.Write(p); err != nil {
			return err
		}
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
	if beforeRename != nil {
		beforeRename(f.Name())
	}
	return os.Rename(f.Name(), p)
}

// beforeRename, when set (tests), is called with a Put's temporary file
// written whole, before its rename.
var beforeRename func(tmp string)

// writerTag names the process in its Puts' temporary files
// (".NAME-PID@HOST-RANDOM"), so that RemoveStale can tell whether their
// writer still runs.
var writerTag = func() string {
	host, _ := os.Hostname()
	clean := strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_') {
			return r
		}
		return '_'
	}, host)
	return fmt.Sprintf("%d@%s", os.Getpid(), clean)
}()

// StaleAfter is how long RemoveStale leaves a temporary file whose writer
// it cannot see (one of another host, on a shared file system, or one
// not named by this version): a Put writes its file in one call and
// renames it at once, so one not renamed for an hour was left by a
// writer that died.
var StaleAfter = time.Hour

// RemoveStale removes the temporary files that Puts of keys left beside
// them when their writer died (killed mid-write; a Put that fails removes
// its own): those whose writer was a process of this host that no longer
// runs, and any not modified for StaleAfter. A live writer's file is
// kept, so that its rename still lands. It returns how many it removed.
// Each folder of keys is listed once.
func (s *DirStore) RemoveStale(ctx context.Context, keys []string) (int, error) {
	byDir := map[string]map[string]bool{} // folder → names of keys in it
	for _, key := range keys {
		p, err := s.path(key)
		if err != nil {
			return 0, err
		}
		dir, name := filepath.Split(p)
		if byDir[dir] == nil {
			byDir[dir] = map[string]bool{}
		}
		byDir[dir][name] = true
	}
	host := writerTag[strings.IndexByte(writerTag, '@')+1:]
	removed := 0
	for dir, names := range byDir {
		if err := context.Cause(ctx); err != nil {
			return removed, err
		}
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return removed, err
		}
		for _, e := range entries {
			name, tag, ok := tempOf(e.Name())
			if !ok || !names[name] || e.IsDir() {
				continue
			}
			stale := false
			if pid, h, ok := strings.Cut(tag, "@"); ok && h == host {
				if n, err := strconv.Atoi(pid); err == nil && n > 0 && !processRuns(n) {
					stale = true
				}
			}
			if !stale {
				info, err := e.Info()
				if err != nil {
					continue // renamed or removed meanwhile
				}
				stale = time.Since(info.ModTime()) > StaleAfter
			}
			if !stale {
				continue
			}
			if err := os.Remove(filepath.Join(dir, e.Name())); err == nil {
				removed++
			} else if !errors.Is(err, fs.ErrNotExist) {
				return removed, err
			}
		}
	}
	return removed, nil
}

// tempOf parses a Put's temporary file name, ".NAME-TAG-RANDOM" (TAG
// empty for the files of versions before writerTag): the key's last part
// and the writer's tag.
func tempOf(file string) (name, tag string, ok bool) {
	if !strings.HasPrefix(file, ".") || isMetaName(file) {
		return "", "", false
	}
	rest := file[1:]
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		return "", "", false
	}
	if _, err := strconv.ParseUint(rest[i+1:], 10, 64); err != nil {
		return "", "", false
	}
	rest = rest[:i]
	// NAME-PID@HOST, or NAME alone (an older version's, or a name
	// holding '-').
	if j := strings.LastIndexByte(rest, '-'); j > 0 && strings.Contains(rest[j+1:], "@") {
		return rest[:j], rest[j+1:], true
	}
	return rest, "", true
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
