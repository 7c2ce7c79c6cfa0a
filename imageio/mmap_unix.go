//go:build unix

package imageio

import (
	"os"

	"golang.org/x/sys/unix"
)

func mapFile(f *os.File, size int64) ([]byte, error) {
	if int64(int(size)) != size {
		return nil, ErrNotMappable
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	return b, nil
}

func unmapFile(b []byte) error { return unix.Munmap(b) }

// releaseMapped drops the mapping's resident pages (MADV_DONTNEED: a
// read-only file mapping reads them again from the file on access).
func releaseMapped(b []byte) { unix.Madvise(b, unix.MADV_DONTNEED) }
