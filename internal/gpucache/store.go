package gpucache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// DirEnv names the environment variable that moves every backend's cache:
// a Store's directory is $NDCONV_CACHE_DIR/<Subdir> where it is set.
const DirEnv = "NDCONV_CACHE_DIR"

// Store is one backend's directory of cache files. A file is a header and
// the payload:
//
//	magic   8 bytes  Magic ("NDCUBIN\x01", "NDCLBIN\x01")
//	key     32 bytes the Key it was stored under
//	length  8 bytes  little-endian length of the payload
//	sum     32 bytes SHA-256 of the payload
//	payload length bytes
//
// so that a truncated, extended, altered or misplaced file is recognised
// before the driver sees it. It is named <key in hex><Suffix>.
type Store struct {
	Subdir  string // the backend's directory under the cache root: "cuda"
	Magic   string // the file's first 8 bytes: "NDCUBIN\x01"
	Suffix  string // the file name's ending: ".cubin"
	Payload string // what a file holds, for messages: "CUBIN"
	Damaged string // a *FileError's message begins with it: "cuda: damaged module cache file"
	// Getenv reads DirEnv; nil means os.Getenv.
	Getenv func(string) string
}

// maxFileSize is far above any compiled artifact; it bounds what a damaged
// file makes us read.
const maxFileSize = 1 << 30

// HeaderSize is the length of a file's header: everything but the payload.
func (s *Store) HeaderSize() int { return len(s.Magic) + sha256.Size + 8 + sha256.Size }

// Dir is where the store keeps its files: $NDCONV_CACHE_DIR/<Subdir> if
// that is set, else <Subdir> in UserDir.
func (s *Store) Dir() (string, error) {
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if dir := getenv(DirEnv); dir != "" {
		return filepath.Join(dir, s.Subdir), nil
	}
	base, err := UserDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, s.Subdir), nil
}

// UserDir is ndconv's directory in the user's cache directory
// (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on Linux), where compiled
// kernels and the tuning cache live unless the environment names other
// places. Under go test (testing.Testing) it is a directory of the
// temporary directory instead: tests never write into the user's caches
// (they left 84 OpenCL binaries there) nor read the user's tuning, and the
// test binaries of one machine still share what they compiled.
func UserDir() (string, error) {
	if testing.Testing() {
		return filepath.Join(os.TempDir(), fmt.Sprintf("ndconv-test-%d", os.Getuid())), nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "ndconv"), nil
}

// Clear deletes the store's files in Dir (and any temporary files left by
// an interrupted write), leaving other files alone. A directory that does
// not exist is already clear.
func (s *Store) Clear() error {
	dir, err := s.Dir()
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
		if !e.IsDir() && strings.HasSuffix(e.Name(), s.Suffix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// FileName is the path of key's file in dir.
func (s *Store) FileName(dir string, key Key) string {
	return filepath.Join(dir, key.String()+s.Suffix)
}

// Encode returns the file for payload stored under key.
func (s *Store) Encode(key Key, payload []byte) []byte {
	sum := sha256.Sum256(payload)
	b := make([]byte, 0, s.HeaderSize()+len(payload))
	b = append(b, s.Magic...)
	b = append(b, key[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(payload)))
	b = append(b, sum[:]...)
	return append(b, payload...)
}

// FileError is a cache file that is not what was stored.
type FileError struct {
	Damaged string // the Store's Damaged
	Reason  string
}

func (e *FileError) Error() string { return e.Damaged + ": " + e.Reason }

func (s *Store) damaged(format string, args ...any) error {
	return &FileError{Damaged: s.Damaged, Reason: fmt.Sprintf(format, args...)}
}

// Decode checks data against key and returns the payload in it, or a
// *FileError.
func (s *Store) Decode(key Key, data []byte) ([]byte, error) {
	if n := s.HeaderSize(); len(data) < n {
		return nil, s.damaged("%d bytes, shorter than the %d-byte header", len(data), n)
	}
	if string(data[:len(s.Magic)]) != s.Magic {
		return nil, s.damaged("bad magic")
	}
	rest := data[len(s.Magic):]
	if !bytes.Equal(rest[:sha256.Size], key[:]) {
		return nil, s.damaged("stored under another key")
	}
	rest = rest[sha256.Size:]
	n := binary.LittleEndian.Uint64(rest)
	rest = rest[8:]
	sum, payload := rest[:sha256.Size], rest[sha256.Size:]
	if n != uint64(len(payload)) {
		return nil, s.damaged("header says %d bytes of %s, file holds %d", n, s.Payload, len(payload))
	}
	if got := sha256.Sum256(payload); !bytes.Equal(got[:], sum) {
		return nil, s.damaged("checksum mismatch")
	}
	return payload, nil
}

// Read returns the payload cached under key in dir: an error matching
// fs.ErrNotExist if there is none, a *FileError if the file is damaged.
func (s *Store) Read(dir string, key Key) ([]byte, error) {
	path := s.FileName(dir, key)
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxFileSize {
		return nil, s.damaged("%d bytes, too large", fi.Size())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return s.Decode(key, data)
}

// Write stores payload under key in dir atomically: written to a
// temporary file in dir, then renamed over the final name, so that a
// reader (another process included) sees the old file, or no file, or the
// whole new one, and concurrent writers of one key each install a whole
// file.
func (s *Store) Write(dir string, key Key, payload []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*"+s.Suffix)
	if err != nil {
		return err
	}
	_, werr := tmp.Write(s.Encode(key, payload))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), s.FileName(dir, key)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// Has reports whether a file for key is in the store, by its name and size
// alone (no read, no checksum): what a cost estimate asks before choosing
// a device, where a damaged file found later only costs a build.
func (s *Store) Has(key Key) bool {
	dir, err := s.Dir()
	if err != nil {
		return false
	}
	fi, err := os.Stat(s.FileName(dir, key))
	return err == nil && fi.Mode().IsRegular() && fi.Size() > int64(s.HeaderSize())
}
