package job

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ndconv/ndconv/chunk"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

// Stats counts what the blocks did, from the workers at once: the time
// each stage took, summed over the blocks in flight, and the bytes read
// and written.
type Stats struct {
	Read, Compute, Write atomic.Int64 // nanoseconds
	In, Out              atomic.Int64 // bytes
	Written, Skipped     atomic.Int64 // blocks
	// Stale counts the temporary files of dead writers removed (a worker
	// killed mid-write leaves its shard's beside it).
	Stale atomic.Int64
}

func (s *Stats) add(t *atomic.Int64, since time.Time) { t.Add(int64(time.Since(since))) }

// emptyFolder holds the markers of shards that hold only the fill value:
// Zarr stores no such shard, so without its marker a block that wrote it
// could not be told from one never run.
const emptyFolder = "ndconv_empty"

// Sink writes blocks' output to a Zarr array, whole shards each, and
// tells which blocks are stored whole. Shards stored already (those
// listed by StoredKeys when the sink was made, and those it wrote since)
// are not written again, so that a block an interrupted run had half
// written gets only its missing shards. A shard that holds only the fill
// value is not stored (zarr deletes it): the sink stores an empty marker
// for it instead, after the shard's Put.
type Sink struct {
	ctx   context.Context
	a     *zarr.Array
	stats *Stats
	fill  []byte // one fill element, in the machine's byte order

	mu     sync.Mutex
	stored map[string]bool

	// Before, when not nil, is called before each block is written (a
	// test's injected failure); After with the blocks written so far.
	Before func()
	After  func(n int64)
}

// NewSink returns a sink writing to a, whose shards stored now are those
// of stored (StoredKeys; nil when none are), counting into stats (nil:
// not counted).
func NewSink(ctx context.Context, a *zarr.Array, stored map[string]bool, stats *Stats) *Sink {
	if stored == nil {
		stored = map[string]bool{}
	}
	if stats == nil {
		stats = &Stats{}
	}
	f, _ := nd.New(a.DType(), 1)
	nd.Store(f.Data, 0, 1, []float64{a.Meta().FillValue})
	return &Sink{ctx: ctx, a: a, stats: stats, stored: stored, fill: f.Bytes()}
}

// WriteRegion writes a block's output at start (chunk.Sink): the shards
// of the box not stored yet.
func (s *Sink) WriteRegion(start []int, src nd.Array) (err error) {
	defer nd.RecoverPanic(&err)
	if s.Before != nil {
		s.Before()
	}
	t := time.Now()
	if !s.anyStored(start, src.Shape) {
		err = s.a.WriteRegion(s.ctx, start, src)
	} else {
		err = s.writeMissing(start, src)
	}
	if err == nil {
		err = s.markEmpty(start, src)
	}
	s.stats.add(&s.stats.Write, t)
	if err != nil {
		return err
	}
	s.stats.Out.Add(int64(len(src.Bytes())))
	n := s.stats.Written.Add(1)
	if s.After != nil {
		s.After(n)
	}
	return nil
}

// shards calls fn for the index, start and shape of each shard of the
// box at start of shape (whose edges lie on the shard grid).
func (s *Sink) shards(start, shape []int, fn func(idx, lo, n []int) error) error {
	return shardsOf(s.a.ShardShape(), s.a.Shape(), start, shape, fn)
}

func shardsOf(grid, full, start, shape []int, fn func(idx, lo, n []int) error) error {
	rank := len(start)
	first, count := make([]int, rank), make([]int, rank)
	total := 1
	for d := range rank {
		first[d] = start[d] / grid[d]
		count[d] = (start[d]+shape[d]+grid[d]-1)/grid[d] - first[d]
		total *= count[d]
	}
	for i := range total {
		idx, lo, n := make([]int, rank), make([]int, rank), make([]int, rank)
		for d, r := rank-1, i; d >= 0; d-- {
			idx[d] = first[d] + r%count[d]
			r /= count[d]
			lo[d] = idx[d] * grid[d]
			n[d] = min(grid[d], full[d]-lo[d])
		}
		if err := fn(idx, lo, n); err != nil {
			return err
		}
	}
	return nil
}

// emptyKey is the key of the marker of shard idx.
func emptyKey(a *zarr.Array, idx []int) string {
	var b strings.Builder
	if a.Path() != "" {
		b.WriteString(a.Path() + "/")
	}
	b.WriteString(emptyFolder + "/")
	for d, i := range idx {
		if d > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

// has reports whether shard idx is stored, or marked as holding only the
// fill value.
func (s *Sink) has(idx []int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored[s.a.Key(idx)] || s.stored[emptyKey(s.a, idx)]
}

func (s *Sink) note(key string) {
	s.mu.Lock()
	s.stored[key] = true
	s.mu.Unlock()
}

var errStop = errors.New("stop")

// anyStored reports whether a shard of the box is stored.
func (s *Sink) anyStored(start, shape []int) bool {
	return s.shards(start, shape, func(idx, _, _ []int) error {
		if s.has(idx) {
			return errStop
		}
		return nil
	}) != nil
}

// Done reports whether every shard of the box at start of shape (a
// block's output, the bank axis included) is stored.
func (s *Sink) Done(start, shape []int) bool {
	return s.shards(start, shape, func(idx, _, _ []int) error {
		if !s.has(idx) {
			return errStop
		}
		return nil
	}) == nil
}

// writeMissing writes the shards of a block that are not stored: a
// block an interrupted run had half written.
func (s *Sink) writeMissing(start []int, src nd.Array) error {
	size := src.DType().Size()
	return s.shards(start, src.Shape, func(idx, lo, n []int) error {
		if s.has(idx) {
			return nil
		}
		part, err := nd.New(src.DType(), n...)
		if err != nil {
			return err
		}
		at := make([]int, len(lo))
		for d := range lo {
			at[d] = lo[d] - start[d]
		}
		chunk.CopyBox(part.Bytes(), n, make([]int, len(n)), src.Bytes(), src.Shape, at, n, size)
		return s.a.WriteRegion(s.ctx, lo, part)
	})
}

// markEmpty notes the block's shards as stored, and stores the marker of
// each that holds only the fill value (which zarr deleted instead).
func (s *Sink) markEmpty(start []int, src nd.Array) error {
	return s.shards(start, src.Shape, func(idx, lo, n []int) error {
		key := s.a.Key(idx)
		if s.has(idx) {
			return nil
		}
		at := make([]int, len(lo))
		for d := range lo {
			at[d] = lo[d] - start[d]
		}
		if !boxAllFill(src.Bytes(), src.Shape, at, n, s.fill) {
			s.note(key)
			return nil
		}
		mark := emptyKey(s.a, idx)
		if err := s.a.Store().Put(s.ctx, mark, nil); err != nil {
			return err
		}
		s.note(mark)
		return nil
	})
}

// boxAllFill reports whether the box at at of shape n, of the C-order
// array b of shape full, holds only the element fill: read in place, row
// by row (a copy of each shard, only to look at it, cost as much memory
// traffic as the shard's encoding).
func boxAllFill(b []byte, full, at, n []int, fill []byte) bool {
	rank := len(full)
	if rank == 0 {
		return allFill(b[:len(fill)], fill)
	}
	for _, v := range n {
		if v == 0 {
			return true
		}
	}
	es := len(fill)
	p := slices.Clone(at)
	for {
		o := 0
		for d := range rank {
			o = o*full[d] + p[d]
		}
		if !allFill(b[o*es:(o+n[rank-1])*es], fill) {
			return false
		}
		d := rank - 2
		for ; d >= 0; d-- {
			if p[d]++; p[d] < at[d]+n[d] {
				break
			}
			p[d] = at[d]
		}
		if d < 0 {
			return true
		}
	}
}

func allFill(b, fill []byte) bool {
	for i := 0; i+len(fill) <= len(b); i += len(fill) {
		if !bytes.Equal(b[i:i+len(fill)], fill) {
			return false
		}
	}
	return true
}

// StoredKeys lists the keys stored now under the array's path: its
// shards, and the markers of the shards that hold only the fill value.
func StoredKeys(ctx context.Context, a *zarr.Array) (map[string]bool, error) {
	prefix := ""
	if a.Path() != "" {
		prefix = a.Path() + "/"
	}
	keys, err := a.Store().List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m, nil
}
