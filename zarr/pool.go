package zarr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"sync"
)

// bufPools hold byte buffers between uses, by size class (a class k
// buffer has a capacity of at least 1<<k): a chunk's stored bytes read
// from a file, a shard's bytes before encoding, and its encoded form
// before its Put. Without them each was a fresh large allocation, which
// the runtime zeroes (and the kernel maps in) before it is overwritten
// whole: 8% of the CPU of a 1024³ float32 Zarr → Zarr run on two cores
// (docs/perf/streaming.md); with one pool for every size, a request
// often met a buffer too small and allocated anyway. A buffer goes back
// only where its last reader is known to be done with it.
var bufPools [bits.UintSize]sync.Pool // *[]byte

// boxPool holds the empty *[]byte boxes getBuf takes out of bufPools, for
// putBuf to reuse: a new box at each putBuf was a small allocation at each
// chunk read and encoded, and small allocations pay for the collector's
// sweeping, which on many cores at once is contended (it was a third of a
// 64-core block run's CPU time).
var boxPool sync.Pool // *[]byte, nil inside

// poisonReleased, set by tests, overwrites each buffer given back to the
// pool, so that a use after release reads garbage at once instead of by
// the chance of another goroutine's reuse.
var poisonReleased bool

// getBuf returns a buffer of length n, from the pool where one is there;
// its contents are arbitrary.
func getBuf(n int) []byte {
	if n <= 0 {
		return []byte{}
	}
	k := bits.Len(uint(n - 1)) // the class whose buffers all hold n
	if p, ok := bufPools[k].Get().(*[]byte); ok {
		b := *p
		*p = nil
		boxPool.Put(p)
		return b[:n]
	}
	return make([]byte, n, 1<<k)
}

// putBuf gives b back to the pool: its caller and everything it handed b
// to are done with it.
func putBuf(b []byte) {
	if cap(b) == 0 {
		return
	}
	b = b[:cap(b)]
	if poisonReleased {
		for i := range b {
			b[i] = 0xA5
		}
	}
	p, ok := boxPool.Get().(*[]byte)
	if !ok {
		p = new([]byte)
	}
	*p = b
	bufPools[bits.Len(uint(cap(b)))-1].Put(p) // the largest class it can serve
}

// getPooled reads key's value into a buffer from the pool where the store
// is a DirStore (whose reads fill a buffer given them), else by s.Get.
// release gives the buffer back; call it once the value and everything
// decoded without a copy from it are no longer read.
func getPooled(ctx context.Context, s Store, key string) (data []byte, release func(), err error) {
	ds, ok := s.(*DirStore)
	if !ok {
		data, err = s.Get(ctx, key)
		return data, func() {}, err
	}
	data, pooled, err := ds.getInto(ctx, key)
	if err != nil || !pooled {
		return data, func() {}, err
	}
	return data, func() { putBuf(data) }, nil
}

// getInto is Get reading into a buffer from the pool (pooled: true) sized
// from the file's Stat; a file that grows between the Stat and its end
// is read as Get reads it.
func (s *DirStore) getInto(ctx context.Context, key string) (b []byte, pooled bool, err error) {
	if err := context.Cause(ctx); err != nil {
		return nil, false, err
	}
	p, err := s.path(key)
	if err != nil {
		return nil, false, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, false, notFound(key, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if fi.IsDir() {
		return nil, false, fmt.Errorf("%w: %s is a directory", ErrNotFound, key)
	}
	if fi.Size() > maxValueBytes {
		return nil, false, formatErrorf(key, nil, "%d bytes, more than the %d a value may hold", fi.Size(), int64(maxValueBytes))
	}
	b = getBuf(int(fi.Size()))
	n, err := io.ReadFull(f, b)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return b[:n], true, nil // it shrank since the Stat
	case err != nil:
		putBuf(b)
		return nil, false, err
	}
	var one [1]byte
	if m, _ := f.Read(one[:]); m == 0 {
		return b, true, nil
	}
	// It grew since the Stat: read it as Get does.
	putBuf(b)
	b, err = s.Get(ctx, key)
	return b, false, err
}

// getRangePooled is GetRange reading into a buffer from the pool where
// the store is a DirStore, else s.GetRange; release gives the buffer back
// (as getPooled's).
func getRangePooled(ctx context.Context, s Store, key string, off, n int64) (data []byte, release func(), err error) {
	ds, ok := s.(*DirStore)
	if !ok || n < 0 || n > maxValueBytes { // (the store refuses the latter)
		data, err = s.GetRange(ctx, key, off, n)
		return data, func() {}, err
	}
	b := getBuf(int(n))
	if data, err = ds.getRangeInto(ctx, key, off, n, b); err != nil {
		putBuf(b)
		return nil, nil, err
	}
	return data, func() { putBuf(b) }, nil
}
