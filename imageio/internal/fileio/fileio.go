// Package fileio holds the file handling every codec of imageio shares:
// writing a file atomically, and finding how many bytes a reader has left
// so that a header's claims can be checked before anything is allocated.
package fileio

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// WriteAtomic writes path through a temporary file in the same directory
// and a rename, so that a failed write leaves nothing behind and path may
// be the file its data was read from. An existing file's permissions are
// kept.
func WriteAtomic(path string, write func(io.Writer) error) error {
	return WriteAtomicContext(context.Background(), path, write)
}

// WriteAtomicContext is WriteAtomic that stops when ctx is done: write
// sees an error from its next Write (at most writeChunk bytes later), the
// temporary file is removed and the error is ctx's cause. A ctx done
// before the rename also leaves nothing.
//
// A path that is a symbolic link is written through: the temporary file is
// made beside the link's final target and renamed onto it, so the link
// stays (as cp and a shell's > do); a dangling link's target is created.
func WriteAtomicContext(ctx context.Context, path string, write func(io.Writer) error) (err error) {
	path, err = followLinks(path)
	if err != nil {
		return err
	}
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
	// The temporary file goes on any way out but the rename: an error, or
	// a panic in write (which goes on up once the file is gone).
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(&contextWriter{ctx: ctx, w: f}); err != nil {
		return err
	}
	if err := context.Cause(ctx); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	renamed = true
	return nil
}

// maxLinks bounds a chain of symbolic links, as the system's ELOOP does.
const maxLinks = 40

// followLinks returns the path a chain of symbolic links at path ends at,
// the last link's target whether it exists or not; a path that is not a
// link is itself.
func followLinks(path string) (string, error) {
	start := path
	for range maxLinks {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", &os.PathError{Op: "write", Path: start, Err: errors.New("too many levels of symbolic links")}
}

// writeChunk bounds the bytes written between two looks at the context.
const writeChunk = 1 << 20

// contextWriter writes to w in chunks of at most writeChunk bytes and
// fails with ctx's cause once ctx is done.
type contextWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c *contextWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if err := context.Cause(c.ctx); err != nil {
			return n, err
		}
		chunk := p[:min(len(p), writeChunk)]
		k, err := c.w.Write(chunk)
		n += k
		if err != nil {
			return n, err
		}
		testHookWriting(c.ctx)
		p = p[len(chunk):]
	}
	return n, nil
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
