// Package fileio holds the file handling every codec of imageio shares:
// writing a file atomically, and finding how many bytes a reader has left
// so that a header's claims can be checked before anything is allocated.
package fileio

import (
	"io"
	"os"
	"path/filepath"
)

// WriteAtomic writes path through a temporary file in the same directory
// and a rename, so that a failed write leaves nothing behind and path may
// be the file its data was read from. An existing file's permissions are
// kept.
func WriteAtomic(path string, write func(io.Writer) error) (err error) {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
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
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Remaining returns how many bytes r has left, when that can be known: for
// readers with a Len method (bytes.Reader, strings.Reader), regular files
// and other io.Seekers. known is false for pipes and streams. The error is
// that of seeking back to where r was.
func Remaining(r io.Reader) (n int64, known bool, err error) {
	switch v := r.(type) {
	case interface{ Len() int }:
		return int64(v.Len()), true, nil
	case *os.File:
		// Only a regular file's size means anything; a pipe or a
		// terminal may seek or report a size of 0 while it has data.
		if fi, err := v.Stat(); err != nil || !fi.Mode().IsRegular() {
			return 0, false, nil
		}
	}
	s, ok := r.(io.Seeker)
	if !ok {
		return 0, false, nil
	}
	cur, err := s.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, false, nil
	}
	end, err := s.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, false, nil
	}
	if _, err := s.Seek(cur, io.SeekStart); err != nil {
		return 0, false, err
	}
	if end < cur {
		return 0, false, nil
	}
	return end - cur, true, nil
}
