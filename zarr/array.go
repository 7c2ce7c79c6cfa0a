package zarr

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ndconv/ndconv/nd"
)

// Array is a Zarr array in a Store: its metadata, read once by Open or
// written by Create, and the means to read and write its chunks. An Array
// is safe for concurrent use; concurrent writes of one chunk or shard
// leave one of them whole.
type Array struct {
	store Store
	path  string
	p     *parsed
}

// cleanPath trims the slashes of an array's path in its store.
func cleanPath(path string) string { return strings.Trim(path, "/") }

// join is the store key of name under path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "/" + name
}

// Open reads the metadata of the array at path in s: a v3 zarr.json or a
// v2 .zarray. A path that names an OME-Zarr multiscale group opens its
// first (full-resolution) dataset; any other group is an error that says
// to name an array inside it.
func Open(ctx context.Context, s Store, path string) (*Array, error) {
	path = cleanPath(path)
	node, err := readNode(ctx, s, path)
	if err != nil {
		return nil, err
	}
	if node.group {
		ms, err := parseMultiscales(join(path, node.metaName), node.attrs)
		if err == nil && len(ms) > 0 && len(ms[0].Datasets) > 0 {
			return Open(ctx, s, join(path, ms[0].Datasets[0].Path))
		}
		where := path
		if where == "" {
			where = "the store's root"
		}
		return nil, &ArgumentError{Arg: "path", Msg: where + " is a Zarr group, not an array: name an array inside it (path.zarr/group/array)"}
	}
	return &Array{store: s, path: path, p: node.array}, nil
}

// node is what a path of a store holds: an array or a group.
type node struct {
	group    bool
	array    *parsed
	metaName string                     // zarr.json, .zarray or .zgroup
	attrs    map[string]json.RawMessage // the group's or array's attributes
	format   int
}

// readNode reads the metadata at path: v3 first, then v2.
func readNode(ctx context.Context, s Store, path string) (*node, error) {
	key := join(path, "zarr.json")
	b, err := s.Get(ctx, key)
	switch {
	case err == nil:
		var head struct {
			NodeType   string                     `json:"node_type"`
			Attributes map[string]json.RawMessage `json:"attributes"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			return nil, formatErrorf(key, err, "not the JSON of Zarr v3 metadata")
		}
		if head.NodeType == "group" {
			return &node{group: true, metaName: "zarr.json", attrs: head.Attributes, format: 3}, nil
		}
		p, err := parseV3(key, b)
		if err != nil {
			return nil, err
		}
		return &node{array: p, metaName: "zarr.json", attrs: p.Attributes, format: 3}, nil
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	attrs, err := readV2Attrs(ctx, s, path)
	if err != nil {
		return nil, err
	}
	key = join(path, ".zarray")
	b, err = s.Get(ctx, key)
	switch {
	case err == nil:
		p, err := parseV2(key, b)
		if err != nil {
			return nil, err
		}
		p.Attributes = attrs
		return &node{array: p, metaName: ".zarray", attrs: attrs, format: 2}, nil
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	if _, err := s.Get(ctx, join(path, ".zgroup")); err == nil {
		return &node{group: true, metaName: ".zgroup", attrs: attrs, format: 2}, nil
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	where := path
	if where == "" {
		where = "the store's root"
	}
	return nil, fmt.Errorf("zarr: no Zarr array or group at %s (neither zarr.json nor .zarray): %w", where, ErrNotFound)
}

func readV2Attrs(ctx context.Context, s Store, path string) (map[string]json.RawMessage, error) {
	key := join(path, ".zattrs")
	b, err := s.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var attrs map[string]json.RawMessage
	if err := json.Unmarshal(b, &attrs); err != nil {
		return nil, formatErrorf(key, err, "not a JSON object")
	}
	return attrs, nil
}

// Create writes the metadata of a new array at path in s, and that of a
// group at each folder above it that has none, and returns the array (no
// chunk is written: every element reads as the fill value). An array or
// group already at path is an error: Remove it first.
func Create(ctx context.Context, s Store, path string, m Meta) (*Array, error) {
	path = cleanPath(path)
	m, err := m.normalize()
	if err != nil {
		return nil, err
	}
	docs, err := m.encodeMeta()
	if err != nil {
		return nil, err
	}
	if _, err := readNode(ctx, s, path); err == nil {
		return nil, &ArgumentError{Arg: "path", Msg: fmt.Sprintf("%q already holds Zarr metadata; Remove it first", path)}
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if err := createParents(ctx, s, path, m.Format); err != nil {
		return nil, err
	}
	var p *parsed
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range docs {
			if !yield(k) {
				return
			}
		}
	}) {
		key := join(path, name)
		switch name {
		case "zarr.json":
			p, err = parseV3(key, docs[name])
		case ".zarray":
			p, err = parseV2(key, docs[name])
		}
		if err != nil {
			return nil, fmt.Errorf("zarr: internal error: the metadata written does not read back: %w", err)
		}
		if err := s.Put(ctx, key, docs[name]); err != nil {
			return nil, err
		}
	}
	p.Attributes = m.Attributes
	return &Array{store: s, path: path, p: p}, nil
}

// createParents writes group metadata at each folder above path that has
// none.
func createParents(ctx context.Context, s Store, path string, format int) error {
	if path == "" {
		return nil
	}
	parts := strings.Split(path, "/")
	for i := range parts {
		dir := strings.Join(parts[:i], "/")
		if _, err := readNode(ctx, s, dir); err == nil {
			continue
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if err := writeGroup(ctx, s, dir, format, nil); err != nil {
			return err
		}
	}
	return nil
}

// writeGroup writes the metadata of a group at dir with attrs.
func writeGroup(ctx context.Context, s Store, dir string, format int, attrs map[string]any) error {
	if format == 2 {
		b, _ := marshal(map[string]any{"zarr_format": 2})
		if err := s.Put(ctx, join(dir, ".zgroup"), b); err != nil {
			return err
		}
		if attrs != nil {
			b, err := marshal(attrs)
			if err != nil {
				return err
			}
			return s.Put(ctx, join(dir, ".zattrs"), b)
		}
		return nil
	}
	if attrs == nil {
		attrs = map[string]any{}
	}
	b, err := marshal(map[string]any{"zarr_format": 3, "node_type": "group", "attributes": attrs})
	if err != nil {
		return err
	}
	return s.Put(ctx, join(dir, "zarr.json"), b)
}

// Remove deletes every key at and under path in s: an array or group and
// all it holds. A path that holds nothing is no error.
func Remove(ctx context.Context, s Store, path string) error {
	path = cleanPath(path)
	prefix := ""
	if path != "" {
		prefix = path + "/"
	}
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// Meta returns the array's description (copies of its slices).
func (a *Array) Meta() Meta {
	m := a.p.Meta
	m.Shape, m.ChunkShape, m.ShardShape = slices.Clone(m.Shape), slices.Clone(m.ChunkShape), slices.Clone(m.ShardShape)
	m.DimensionNames = slices.Clone(m.DimensionNames)
	return m
}

// Shape is the array's shape.
func (a *Array) Shape() []int { return slices.Clone(a.p.Shape) }

// DType is the array's element type.
func (a *Array) DType() nd.DType { return a.p.DType }

// ChunkShape is the shape of a chunk: the unit compressed, and read, on
// its own.
func (a *Array) ChunkShape() []int { return slices.Clone(a.p.ChunkShape) }

// ShardShape is the shape of the unit stored under one key, and written
// whole by WriteChunk: the shard of a sharded array, else the chunk.
func (a *Array) ShardShape() []int { return slices.Clone(a.p.grid) }

// Path is the array's path in its store.
func (a *Array) Path() string { return a.path }

// Store is the store the array lives in.
func (a *Array) Store() Store { return a.store }

// Key is the store key of the shard (or chunk) of grid index idx.
func (a *Array) Key(idx []int) string { return join(a.path, a.p.key(idx)) }

// GridShape is the number of shards (or chunks) along each axis.
func (a *Array) GridShape() []int {
	g := make([]int, len(a.p.Shape))
	for i, s := range a.p.Shape {
		g[i] = (s + a.p.grid[i] - 1) / a.p.grid[i]
	}
	return g
}

// ReadAll reads the whole array into memory.
func (a *Array) ReadAll(ctx context.Context) (nd.Array, error) {
	dst, err := nd.New(a.p.DType, a.p.Shape...)
	if err != nil {
		return nd.Array{}, err
	}
	if err := a.ReadRegion(ctx, make([]int, len(a.p.Shape)), a.p.Shape, dst); err != nil {
		return nd.Array{}, err
	}
	return dst, nil
}

// checkRegion checks a region against the array and an array that holds
// it.
func (a *Array) checkRegion(arg string, start, shape []int, buf nd.Array) error {
	if err := a.checkBox(start, shape); err != nil {
		return err
	}
	if buf.DType() != a.p.DType {
		return argErrorf(arg, "holds %v; the array is %v", buf.DType(), a.p.DType)
	}
	if !slices.Equal(buf.Shape, shape) {
		return argErrorf(arg, "has shape %v; the region's is %v", buf.Shape, shape)
	}
	return buf.Check()
}

// checkBox checks that the box at start of shape lies in the array.
func (a *Array) checkBox(start, shape []int) error {
	rank := len(a.p.Shape)
	if len(start) != rank || len(shape) != rank {
		return argErrorf("region", "start %v and shape %v for an array of %d axes", start, shape, rank)
	}
	for d := range rank {
		if start[d] < 0 || shape[d] < 0 || start[d] > a.p.Shape[d]-shape[d] {
			return argErrorf("region", "start %v shape %v is outside the array's shape %v", start, shape, a.p.Shape)
		}
	}
	return nil
}

// cells calls fn for the grid index of every shard (or chunk) that meets
// the region, from up to workers goroutines, stopping at the first error.
func (a *Array) cells(ctx context.Context, workers int, start, shape []int, fn func(ctx context.Context, idx []int) error) error {
	rank := len(start)
	lo, count := make([]int, rank), make([]int, rank)
	n := 1
	for d := range rank {
		if shape[d] == 0 {
			return nil
		}
		g := a.p.grid[d]
		lo[d] = start[d] / g
		count[d] = (start[d]+shape[d]-1)/g - lo[d] + 1
		n *= count[d]
	}
	idxOf := func(i int) []int {
		idx := make([]int, rank)
		for d := rank - 1; d >= 0; d-- {
			idx[d] = lo[d] + i%count[d]
			i /= count[d]
		}
		return idx
	}
	return parallel(ctx, workers, n, func(ctx context.Context, i int) error { return fn(ctx, idxOf(i)) })
}

// parallel runs fn(0..n-1) on up to workers goroutines, stopping at the
// first error (or ctx's end) and returning it.
func parallel(ctx context.Context, workers, n int, fn func(ctx context.Context, i int) error) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	workers = min(n, workers)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu   sync.Mutex
		next int
		wg   sync.WaitGroup
		once sync.Once
		errv error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					once.Do(func() { errv = err; cancel(err) })
					return
				}
			}
		}()
	}
	wg.Wait()
	if errv != nil {
		return errv
	}
	return context.Cause(ctx)
}

// box is the intersection of a region with a grid cell, in array
// coordinates.
type box struct{ lo, hi []int }

func intersect(aLo, aShape, bLo, bShape []int) box {
	r := box{lo: make([]int, len(aLo)), hi: make([]int, len(aLo))}
	for d := range aLo {
		r.lo[d] = max(aLo[d], bLo[d])
		r.hi[d] = min(aLo[d]+aShape[d], bLo[d]+bShape[d])
	}
	return r
}

func (b box) shape() []int {
	s := make([]int, len(b.lo))
	for d := range s {
		s[d] = max(0, b.hi[d]-b.lo[d])
	}
	return s
}

func (b box) empty() bool {
	for d := range b.lo {
		if b.hi[d] <= b.lo[d] {
			return true
		}
	}
	return false
}

// offset is the element offset of point p (minus origin) under strides.
func offset(p, origin, strides []int) int {
	o := 0
	for d := range p {
		o += (p[d] - origin[d]) * strides[d]
	}
	return o
}

// cStrides are the C-order strides, in elements, of shape.
func cStrides(shape []int) []int {
	s := make([]int, len(shape))
	n := 1
	for d := len(shape) - 1; d >= 0; d-- {
		s[d] = n
		n *= shape[d]
	}
	return s
}

func prod(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// region is a view of a byte buffer as an array: strides in elements.
type region struct {
	b       []byte
	strides []int
	origin  []int // the array coordinates of element 0
}

// ReadRegion reads the elements of the array from start, of the given
// shape, into dst (an array of that shape and of the array's type).
// Chunks not stored read as the fill value. Shards are read whole when
// the region covers them, else their index and the chunks needed, each by
// a ranged read.
func (a *Array) ReadRegion(ctx context.Context, start, shape []int, dst nd.Array) error {
	if err := a.checkRegion("dst", start, shape, dst); err != nil {
		return err
	}
	return a.readRegion(ctx, start, shape, region{b: dst.Bytes(), strides: cStrides(shape), origin: start})
}

// ReadRegionAt is ReadRegion into the box at `at` of dst, a larger array
// of the array's type and rank (a block's input, the region its box of
// it): chunks decode straight into dst's rows where their codecs allow
// (blosc, or none), with no copy of the box.
func (a *Array) ReadRegionAt(ctx context.Context, start, shape []int, dst nd.Array, at []int) error {
	if err := a.checkBox(start, shape); err != nil {
		return err
	}
	if dst.DType() != a.p.DType {
		return argErrorf("dst", "holds %v; the array is %v", dst.DType(), a.p.DType)
	}
	if err := dst.Check(); err != nil {
		return err
	}
	if len(dst.Shape) != len(shape) || len(at) != len(shape) {
		return argErrorf("dst", "shape %v and at %v for a region of %d axes", dst.Shape, at, len(shape))
	}
	origin := make([]int, len(shape))
	for d := range shape {
		if at[d] < 0 || at[d]+shape[d] > dst.Shape[d] {
			return argErrorf("dst", "the box at %v of shape %v is outside its shape %v", at, shape, dst.Shape)
		}
		origin[d] = start[d] - at[d]
	}
	return a.readRegion(ctx, start, shape, region{b: dst.Bytes(), strides: cStrides(dst.Shape), origin: origin})
}

// readRegion reads the box at start of shape into out.
func (a *Array) readRegion(ctx context.Context, start, shape []int, out region) error {
	return a.cells(ctx, readWorkers(a.store), start, shape, func(ctx context.Context, idx []int) error {
		cellLo := make([]int, len(idx))
		for d := range idx {
			cellLo[d] = idx[d] * a.p.grid[d]
		}
		want := intersect(start, shape, cellLo, a.p.grid)
		key := a.Key(idx)
		if a.p.outer.shard != nil {
			covered := slices.Equal(want.shape(), intersect(cellLo, a.p.grid, make([]int, len(idx)), a.p.Shape).shape())
			return a.readShard(ctx, key, cellLo, want, covered, out)
		}
		data, release, err := getPooled(ctx, a.store, key)
		if errors.Is(err, ErrNotFound) {
			a.fill(out, want)
			return nil
		}
		if err != nil {
			return err
		}
		// data (and the decoded chunk, where the codecs only check it)
		// is read until decodeChunk's copy.
		defer release()
		return a.decodeChunk(key, &a.p.outer, data, a.p.grid, cellLo, want, out)
	})
}

// decodeChunk decodes a chunk's stored bytes (data, through the codecs c)
// as the chunk of shape at lo in the array, and copies its part w into
// out. Where out is exactly that chunk, in C order (a read of one chunk,
// as the blocks' chunk cache makes), the chunk is decoded there instead:
// no buffer for it, no copy. Where the last decoder writes blocks of the
// chunk's bytes a run at a time (blosc, or a chunk stored raw), its part
// w is decoded straight into out's rows (directRuns).
func (a *Array) decodeChunk(key string, c *chain, data []byte, shape, lo []int, w box, out region) error {
	es := a.p.DType.Size()
	var into []byte
	if c.perm == nil && slices.Equal(out.origin, lo) && len(out.b) == prod(shape)*es && slices.Equal(out.strides, cStrides(shape)) &&
		slices.Equal(w.shape(), shape) {
		into = out.b
	}
	if into == nil {
		if rs, ok := directRuns(c, out, lo, shape, w, es); ok {
			return decodeArrayRuns(key, c, data, rs)
		}
	}
	buf, strides, err := decodeArrayInto(key, c, data, shape, a.p.DType, into)
	if err != nil {
		return err
	}
	if len(buf) > 0 && len(into) > 0 && &buf[0] == &into[0] {
		return nil
	}
	copyBox(out, region{b: buf, strides: strides, origin: lo}, w, es)
	return nil
}

// fill sets box w of out to the fill value.
func (a *Array) fill(out region, w box) {
	es := a.p.DType.Size()
	zero := !slices.ContainsFunc(a.p.fill, func(b byte) bool { return b != 0 })
	if len(w.lo) == 0 {
		copy(out.b[:es], a.p.fill)
		return
	}
	walkRows(w, func(p []int, n int) {
		o := offset(p, out.origin, out.strides)
		s := out.strides[len(p)-1]
		if s == 1 {
			row := out.b[o*es : (o+n)*es]
			if zero {
				clear(row)
				return
			}
			for i := 0; i < len(row); i += es {
				copy(row[i:], a.p.fill)
			}
			return
		}
		for i := range n {
			copy(out.b[(o+i*s)*es:], a.p.fill)
		}
	})
}

// walkRows calls fn with the first point and length of every row (a run
// along the last axis) of box w.
func walkRows(w box, fn func(p []int, n int)) {
	rank := len(w.lo)
	if w.empty() {
		return
	}
	if rank == 0 {
		fn(nil, 1)
		return
	}
	p := slices.Clone(w.lo)
	n := w.hi[rank-1] - w.lo[rank-1]
	for {
		fn(p, n)
		d := rank - 2
		for ; d >= 0; d-- {
			p[d]++
			if p[d] < w.hi[d] {
				break
			}
			p[d] = w.lo[d]
		}
		if d < 0 {
			return
		}
	}
}

// copyBox copies box w from src to dst (each a region of elements of es
// bytes).
func copyBox(dst, src region, w box, es int) {
	if len(w.lo) == 0 {
		if !w.empty() {
			copy(dst.b[:es], src.b[:es])
		}
		return
	}
	last := len(w.lo) - 1
	walkRows(w, func(p []int, n int) {
		do, so := offset(p, dst.origin, dst.strides), offset(p, src.origin, src.strides)
		ds, ss := dst.strides[last], src.strides[last]
		if ds == 1 && ss == 1 {
			copy(dst.b[do*es:(do+n)*es], src.b[so*es:(so+n)*es])
			return
		}
		for i := range n {
			copy(dst.b[(do+i*ds)*es:(do+i*ds+1)*es], src.b[(so+i*ss)*es:])
		}
	})
}

// decodeArray decodes a stored chunk of the given shape with chain c (not
// a sharding one): its bytes in the machine's order, and the strides (in
// elements) of the chunk's axes in them.
func decodeArray(key string, c *chain, data []byte, shape []int, dt nd.DType) ([]byte, []int, error) {
	return decodeArrayInto(key, c, data, shape, dt, nil)
}

// decodeArrayInto is decodeArray, its last decoder (the one that yields
// the chunk's bytes) writing into into's memory where it can (an
// intoDecoder, the result fitting): the result is then into[:n].
func decodeArrayInto(key string, c *chain, data []byte, shape []int, dt nd.DType, into []byte) ([]byte, []int, error) {
	n := prod(shape) * dt.Size()
	b := data
	owned := false // whether b is no longer data's memory (a shard's chunks may share bytes)
	for i := len(c.bytes) - 1; i >= 0; i-- {
		if _, ok := c.bytes[i].(crc32cCodec); !ok {
			owned = true
		}
		limit := n
		if i > 0 {
			// A compressed form of the chunk: at worst a little larger.
			limit = n + n/8 + 1<<16
		}
		var err error
		if id, ok := c.bytes[i].(intoDecoder); ok && i == 0 && into != nil {
			b, err = safeDecodeInto(id, b, into, limit)
		} else {
			b, err = safeDecode(c.bytes[i], b, limit)
		}
		if err != nil {
			return nil, nil, formatErrorf(key, err, "codec %s", c.bytes[i].v3().Name)
		}
	}
	if len(b) != n {
		return nil, nil, formatErrorf(key, nil, "decodes to %d bytes; a chunk of shape %v of %v holds %d", len(b), shape, dt, n)
	}
	if c.big != nativeBig && dt.Size() > 1 {
		if !owned {
			b = slices.Clone(b)
		}
		swapBytes(b, dt.Part().Size())
	}
	return b, permStrides(shape, c.perm), nil
}

// directRuns maps the bytes of the chunk at lo of shape to its box w in
// out where codecs c decode it straight there (decodeArrayRuns): no
// transpose, the machine's byte order, and a last decoder that writes
// the chunk's bytes a block at a time (blosc) or none (stored raw).
func directRuns(c *chain, out region, lo, shape []int, w box, es int) (*runs, bool) {
	if c.perm != nil || c.big != nativeBig && es > 1 || c.shard != nil {
		return nil, false
	}
	if len(c.bytes) > 0 {
		if _, ok := c.bytes[0].(bloscCodec); !ok {
			return nil, false
		}
	}
	return newRuns(out, lo, shape, w, es)
}

// decodeArrayRuns is decodeArray for a chunk directRuns maps: the codecs
// before the last decode as decodeArray's do, and the last (blosc, or
// none) writes the chunk's bytes into the region's rows.
func decodeArrayRuns(key string, c *chain, data []byte, rs *runs) error {
	b := data
	for i := len(c.bytes) - 1; i >= 1; i-- {
		var err error
		// A compressed form of the chunk: at worst a little larger.
		if b, err = safeDecode(c.bytes[i], b, rs.size+rs.size/8+1<<16); err != nil {
			return formatErrorf(key, err, "codec %s", c.bytes[i].v3().Name)
		}
	}
	if len(c.bytes) == 0 {
		if len(b) != rs.size {
			return formatErrorf(key, nil, "decodes to %d bytes; the chunk holds %d", len(b), rs.size)
		}
		rs.scatter(b, 0)
		return nil
	}
	if err := recovered(func() error { return bloscDecodeRuns(b, rs) }); err != nil {
		return formatErrorf(key, err, "codec %s", c.bytes[0].v3().Name)
	}
	return nil
}

// safeDecode runs a decoder, turning a panic in a library into an error:
// stored bytes are never trusted.
func safeDecode(c bytesCodec, b []byte, limit int) (out []byte, err error) {
	err = recovered(func() (err error) { out, err = c.decode(b, limit); return err })
	return out, err
}

// safeDecodeInto is safeDecode for decodeInto.
func safeDecodeInto(c intoDecoder, b, into []byte, limit int) (out []byte, err error) {
	err = recovered(func() (err error) { out, err = c.decodeInto(b, into, limit); return err })
	return out, err
}

// recovered runs decode, turning its panic into an error (the decoders'
// guard: safeDecode, safeDecodeInto, decodeArrayRuns).
func recovered(decode func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoder failed: %v", r)
		}
	}()
	return decode()
}

// permStrides are the strides of a chunk's axes where the chunk is stored
// in C order after the transpose perm (nil: none).
func permStrides(shape, perm []int) []int {
	if perm == nil {
		return cStrides(shape)
	}
	stored := make([]int, len(shape))
	for i, p := range perm {
		stored[i] = shape[p]
	}
	ss := cStrides(stored)
	s := make([]int, len(shape))
	for i, p := range perm {
		s[p] = ss[i]
	}
	return s
}

// encodeArray encodes a chunk held in C order in the machine's byte order
// (b is not modified).
func encodeArray(c *chain, b []byte, shape []int, dt nd.DType) ([]byte, error) {
	return encodeArrayInto(c, b, shape, dt, nil)
}

// encodeArrayInto is encodeArray, its last encoder writing into into's
// memory where it can (an intoEncoder, the result fitting).
func encodeArrayInto(c *chain, b []byte, shape []int, dt nd.DType, into []byte) ([]byte, error) {
	es := dt.Size()
	owned := false
	if c.perm != nil {
		t := make([]byte, len(b))
		origin := make([]int, len(shape))
		copyBox(region{b: t, strides: permStrides(shape, c.perm), origin: origin},
			region{b: b, strides: cStrides(shape), origin: origin}, box{lo: origin, hi: shape}, es)
		b, owned = t, true
	}
	if c.big != nativeBig && es > 1 {
		if !owned {
			b = slices.Clone(b)
		}
		swapBytes(b, dt.Part().Size())
	}
	for i, bc := range c.bytes {
		var err error
		if ie, ok := bc.(intoEncoder); ok && i == len(c.bytes)-1 && into != nil {
			b, err = ie.encodeInto(b, into)
		} else {
			b, err = bc.encode(b)
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// emptyChunk is the index entry of a chunk a shard does not hold.
const emptyChunk = math.MaxUint64

// indexLen is the stored size of a shard index of n chunks.
func (s *shardCodec) indexLen(n int) int {
	l := 16 * n
	for range s.index.bytes {
		l += 4 // crc32c: the only index codec read
	}
	return l
}

// readShard reads box want of the shard at key, whose first element is
// at cellLo, into out: the whole shard when covered, else its index and
// the chunks that meet want.
func (a *Array) readShard(ctx context.Context, key string, cellLo []int, want box, covered bool, out region) error {
	s := a.p.outer.shard
	shape := a.p.grid
	rank := len(shape)
	inner := s.inner
	counts := make([]int, rank)
	for d := range rank {
		counts[d] = shape[d] / inner[d]
	}
	nchunks := prod(counts)
	ilen := s.indexLen(nchunks)
	var whole []byte
	var rawIndex []byte
	var err error
	if covered {
		whole, err = a.store.Get(ctx, key)
		if err == nil {
			if len(whole) < ilen {
				return formatErrorf(key, nil, "a shard of %d bytes cannot hold its %d-byte index", len(whole), ilen)
			}
			if s.indexAtStart {
				rawIndex = whole[:ilen]
			} else {
				rawIndex = whole[len(whole)-ilen:]
			}
		}
	} else {
		off := int64(-1)
		if s.indexAtStart {
			off = 0
		}
		rawIndex, err = a.store.GetRange(ctx, key, off, int64(ilen))
	}
	if errors.Is(err, ErrNotFound) {
		a.fill(out, want)
		return nil
	}
	if err != nil {
		return err
	}
	index, err := decodeIndex(key, s, rawIndex, nchunks)
	if err != nil {
		return err
	}
	// Each chunk that meets want, in C order.
	lo, hi := make([]int, rank), make([]int, rank)
	for d := range rank {
		lo[d] = (want.lo[d] - cellLo[d]) / inner[d]
		hi[d] = (want.hi[d] - 1 - cellLo[d]) / inner[d]
	}
	var chunks [][]int
	walkRows(box{lo: lo, hi: addOne(hi)}, func(p []int, n int) {
		for k := range n {
			c := slices.Clone(p)
			if rank > 0 {
				c[rank-1] += k
			}
			chunks = append(chunks, c)
		}
	})
	read := func(ctx context.Context, i int) error {
		c := chunks[i]
		j := offset(c, make([]int, rank), cStrides(counts))
		chunkLo := make([]int, rank)
		for d := range rank {
			chunkLo[d] = cellLo[d] + c[d]*inner[d]
		}
		w := intersect(want.lo, want.shape(), chunkLo, inner)
		off, nb := index[2*j], index[2*j+1]
		if off == emptyChunk && nb == emptyChunk {
			a.fill(out, w)
			return nil
		}
		ckey := fmt.Sprintf("%s (chunk %v)", key, c)
		var data []byte
		if whole != nil {
			if off > uint64(len(whole)) || nb > uint64(len(whole))-off {
				return formatErrorf(ckey, nil, "index points at bytes %d to %d of a %d-byte shard", off, off+nb, len(whole))
			}
			data = whole[off : off+nb]
		} else {
			if off > maxValueBytes || nb > maxValueBytes {
				return formatErrorf(ckey, nil, "index points at bytes %d to %d", off, off+nb)
			}
			var release func()
			var err error
			if data, release, err = getRangePooled(ctx, a.store, key, int64(off), int64(nb)); err != nil {
				return err
			}
			defer release() // data is read until decodeChunk's copy
		}
		return a.decodeChunk(ckey, &s.codecs, data, inner, chunkLo, w, out)
	}
	if whole != nil {
		// In memory already: decoded on every core (a block reading one
		// shard would otherwise decode on one).
		return parallel(ctx, runtime.GOMAXPROCS(0), len(chunks), read)
	}
	// One ranged read per chunk, several in flight (each chunk's box of
	// out is its own).
	return parallel(ctx, readWorkers(a.store), len(chunks), read)
}

func addOne(s []int) []int {
	o := make([]int, len(s))
	for i, v := range s {
		o[i] = v + 1
	}
	return o
}

// decodeIndex checks and decodes a shard index: offset and size of each
// chunk.
func decodeIndex(key string, s *shardCodec, raw []byte, nchunks int) ([]uint64, error) {
	b := raw
	for i := len(s.index.bytes) - 1; i >= 0; i-- {
		var err error
		if b, err = s.index.bytes[i].decode(b, 16*nchunks); err != nil {
			return nil, formatErrorf(key, err, "shard index")
		}
	}
	if len(b) != 16*nchunks {
		return nil, formatErrorf(key, nil, "shard index of %d bytes; %d chunks need %d", len(b), nchunks, 16*nchunks)
	}
	var order binary.ByteOrder = binary.LittleEndian
	if s.index.big {
		order = binary.BigEndian
	}
	idx := make([]uint64, 2*nchunks)
	for i := range idx {
		idx[i] = order.Uint64(b[8*i:])
	}
	return idx, nil
}

// WriteChunk writes the shard (or chunk, for an array not sharded) of
// grid index idx whole, from src: an array of the shard's shape, or of
// its part inside the array for a shard at the array's end. The stored
// value is replaced in one Put; a shard (or chunk) that holds only the
// fill value is deleted instead, and chunks of a shard that do are left
// out of it.
func (a *Array) WriteChunk(ctx context.Context, idx []int, src nd.Array) error {
	rank := len(a.p.Shape)
	if len(idx) != rank {
		return argErrorf("chunk index", "%v for an array of %d axes", idx, rank)
	}
	grid := a.GridShape()
	lo, clipped := make([]int, rank), make([]int, rank)
	for d := range rank {
		if idx[d] < 0 || idx[d] >= grid[d] {
			return argErrorf("chunk index", "%v is outside the grid %v", idx, grid)
		}
		lo[d] = idx[d] * a.p.grid[d]
		clipped[d] = min(a.p.grid[d], a.p.Shape[d]-lo[d])
	}
	if !slices.Equal(src.Shape, clipped) && !slices.Equal(src.Shape, a.p.grid) {
		return argErrorf("src", "has shape %v; shard %v has %v (or %v inside the array)", src.Shape, idx, a.p.grid, clipped)
	}
	if src.DType() != a.p.DType {
		return argErrorf("src", "holds %v; the array is %v", src.DType(), a.p.DType)
	}
	if err := src.Check(); err != nil {
		return err
	}
	in := region{b: src.Bytes(), strides: cStrides(src.Shape), origin: lo}
	return a.writeCell(ctx, idx, lo, in, box{lo: lo, hi: addTo(lo, clipped)})
}

func addTo(a, b []int) []int {
	o := make([]int, len(a))
	for i := range a {
		o[i] = a[i] + b[i]
	}
	return o
}

// RemoveStale removes the temporary files that writers killed before their
// rename left beside the shards (or chunks) that the boxes meet (box i at
// starts[i] of shapes[i]), where the store keeps such files
// (DirStore.RemoveStale: a live writer's stay, each folder is listed once);
// it returns how many it removed. A caller that writes regions another
// process may have died writing (a dask task run again, an array job's
// blocks) cleans up after it with this first.
func (a *Array) RemoveStale(ctx context.Context, starts, shapes [][]int) (int, error) {
	st, ok := a.store.(interface {
		RemoveStale(context.Context, []string) (int, error)
	})
	if !ok {
		return 0, nil
	}
	if len(starts) != len(shapes) {
		return 0, argErrorf("region", "%d starts for %d shapes", len(starts), len(shapes))
	}
	var mu sync.Mutex
	var keys []string
	for i := range starts {
		if err := a.checkBox(starts[i], shapes[i]); err != nil {
			return 0, err
		}
		err := a.cells(ctx, 1, starts[i], shapes[i], func(_ context.Context, idx []int) error {
			mu.Lock()
			defer mu.Unlock()
			keys = append(keys, a.Key(idx))
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return st.RemoveStale(ctx, keys)
}

// WriteRegion writes src at start: a region whose edges lie on the shard
// grid (or at the array's end), so that each shard it covers is written
// whole, once, by WriteChunk's rules. Shards are encoded and stored in
// parallel.
func (a *Array) WriteRegion(ctx context.Context, start []int, src nd.Array) error {
	if err := a.checkRegion("src", start, src.Shape, src); err != nil {
		return err
	}
	for d := range start {
		end := start[d] + src.Shape[d]
		if start[d]%a.p.grid[d] != 0 || (end%a.p.grid[d] != 0 && end != a.p.Shape[d]) {
			return argErrorf("region", "start %v shape %v does not lie on the shard grid %v of shape %v", start, src.Shape, a.p.grid, a.p.Shape)
		}
	}
	in := region{b: src.Bytes(), strides: cStrides(src.Shape), origin: start}
	// One shard per core: each is encoded in memory before its Put.
	return a.cells(ctx, max(4, runtime.GOMAXPROCS(0)), start, src.Shape, func(ctx context.Context, idx []int) error {
		lo := make([]int, len(idx))
		for d := range idx {
			lo[d] = idx[d] * a.p.grid[d]
		}
		return a.writeCell(ctx, idx, lo, in, intersect(start, src.Shape, lo, a.p.grid))
	})
}

// writeCell encodes box w of in as the shard (or chunk) idx starting at
// lo, and stores it (or deletes it, when it holds only the fill value).
func (a *Array) writeCell(ctx context.Context, idx, lo []int, in region, w box) error {
	es := a.p.DType.Size()
	// A DirStore's Put is done with data when it returns, so the shard's
	// buffers can go back to the pool then, and it writes a shard's pieces
	// without laying them out; another Store might keep them.
	ds, pooled := a.store.(*DirStore)
	var into []byte
	if pooled && a.p.outer.shard == nil {
		into = getBuf(encodeBound(prod(a.p.grid) * es))
		defer putBuf(into)
	}
	if rs, ok := encodeRuns(&a.p.outer, in, lo, a.p.grid, w, es); ok {
		// Encoded from in's rows: no copy of the chunk.
		if rs.allFill(a.p.fill) {
			return a.store.Delete(ctx, a.Key(idx))
		}
		enc, err := encodeArrayRuns(&a.p.outer, rs, into)
		if err != nil {
			return fmt.Errorf("zarr: encoding %s: %w", a.Key(idx), err)
		}
		if pooled {
			return ds.putPieces(ctx, a.Key(idx), [][]byte{enc})
		}
		return a.store.Put(ctx, a.Key(idx), enc)
	}
	buf := a.cellBytes(in, w)
	if buf == nil {
		if pooled {
			// Overwritten whole below: by the fill value, then w.
			buf = getBuf(prod(a.p.grid) * es)
			defer putBuf(buf)
		} else {
			buf = make([]byte, prod(a.p.grid)*es)
		}
		cell := region{b: buf, strides: cStrides(a.p.grid), origin: lo}
		if !slices.Equal(w.shape(), a.p.grid) {
			a.fill(cell, box{lo: lo, hi: addTo(lo, a.p.grid)})
		}
		copyBox(cell, in, w, es)
	}
	pieces, release, err := a.encodeCell(buf, into)
	defer release()
	if err != nil {
		return fmt.Errorf("zarr: encoding %s: %w", a.Key(idx), err)
	}
	if pieces == nil {
		return a.store.Delete(ctx, a.Key(idx))
	}
	if pooled {
		return ds.putPieces(ctx, a.Key(idx), pieces)
	}
	data := pieces[0]
	if len(pieces) > 1 {
		// Laid out once, in a buffer of the shard's size: the store may
		// keep it, so the pieces' pooled buffers cannot be it.
		data = slices.Concat(pieces...)
	}
	return a.store.Put(ctx, a.Key(idx), data)
}

// encodeRuns maps the bytes of the chunk at lo of shape to in's rows
// where codecs c encode it from there (encodeArrayRuns): a chunk (not a
// shard) inside the array (w is all of it), codecs directRuns takes
// whose first encoder is blosc.
func encodeRuns(c *chain, in region, lo, shape []int, w box, es int) (*runs, bool) {
	if c.shard != nil || len(c.bytes) == 0 || !slices.Equal(w.shape(), shape) {
		return nil, false
	}
	return directRuns(c, in, lo, shape, w, es)
}

// encodeArrayRuns is encodeArrayInto for a chunk whose bytes rs maps
// (encodeRuns): blosc shuffles and compresses them from the region's
// rows, and the codecs after it encode its output as encodeArrayInto's.
func encodeArrayRuns(c *chain, rs *runs, into []byte) ([]byte, error) {
	bc := c.bytes[0].(bloscCodec)
	var first []byte
	if len(c.bytes) == 1 {
		first = into
	}
	b, err := bc.encodeRuns(rs, first)
	for i := 1; i < len(c.bytes) && err == nil; i++ {
		if ie, ok := c.bytes[i].(intoEncoder); ok && i == len(c.bytes)-1 && into != nil {
			b, err = ie.encodeInto(b, into)
		} else {
			b, err = c.bytes[i].encode(b)
		}
	}
	return b, err
}

// holdIfEncoded keeps the pooled buffer b in *slot where the encoded
// chunk enc lies in its memory (it must live until the shard is laid
// out), else gives b back to the pool.
func holdIfEncoded(slot *[]byte, b, enc []byte, err error) {
	if err == nil && nd.Overlap(nd.Array{Shape: []int{len(enc)}, Data: enc}, nd.Array{Shape: []int{cap(b)}, Data: b[:cap(b)]}) {
		*slot = b
	} else {
		putBuf(b)
	}
}

// cellBytes is the shard w of in when in holds it whole, contiguous and
// in C order (a block of whole rows of shards, one shard in particular):
// encodeCell reads it there instead of from a copy. Nil otherwise, and
// for an array not sharded, whose codecs may hand the bytes themselves to
// the store.
func (a *Array) cellBytes(in region, w box) []byte {
	if a.p.outer.shard == nil || !slices.Equal(w.shape(), a.p.grid) || len(w.lo) == 0 {
		return nil
	}
	// Contiguous: the same extent as the shard on every axis but the
	// first, which the same strides say.
	if !slices.Equal(in.strides, cStrides(a.p.grid)) {
		return nil
	}
	es := a.p.DType.Size()
	o := offset(w.lo, in.origin, in.strides) * es
	n := prod(a.p.grid) * es
	if o < 0 || o+n > len(in.b) {
		return nil
	}
	return in.b[o : o+n : o+n]
}

// allFill reports whether b holds only the fill element.
func allFill(b, fill []byte) bool {
	es := len(fill)
	for i := 0; i < len(b); i += es {
		for k := range es {
			if b[i+k] != fill[k] {
				return false
			}
		}
	}
	return true
}

// encodeCell encodes a shard (or chunk) held in C order as the pieces
// whose concatenation is the stored value: nil when it holds only the fill
// value. An unsharded chunk's encoding is one piece, written into into's
// memory where it fits (into may be nil). A shard's pieces are its index
// and its chunks in the order stored, in buffers from the pool: a store
// that writes pieces (a DirStore) writes them without laying the shard
// out in one more buffer of its size. release gives the buffers back once
// the pieces are stored; it is never nil.
func (a *Array) encodeCell(buf, into []byte) (pieces [][]byte, release func(), err error) {
	release = func() {}
	if allFill(buf, a.p.fill) {
		return nil, release, nil
	}
	s := a.p.outer.shard
	if s == nil {
		enc, err := encodeArrayInto(&a.p.outer, buf, a.p.grid, a.p.DType, into)
		if err != nil {
			return nil, release, err
		}
		return [][]byte{enc}, release, nil
	}
	rank := len(a.p.grid)
	es := a.p.DType.Size()
	counts := make([]int, rank)
	for d := range rank {
		counts[d] = a.p.grid[d] / s.inner[d]
	}
	n := prod(counts)
	ilen := s.indexLen(n)
	base := 0
	if s.indexAtStart {
		base = ilen
	}
	// The chunks are encoded on every core (a block of one shard would
	// otherwise encode on one), then laid out in C order: the same bytes
	// whatever the number of cores.
	// The chunks' copies and encoded forms are in buffers from the pool,
	// given back once the shard is laid out (those an encoded chunk's
	// memory is) or at once (the others).
	encoded := make([][]byte, n)
	held := make([][2][]byte, n)
	release = func() {
		for _, h := range held {
			putBuf(h[0])
			putBuf(h[1])
		}
	}
	zero := make([]int, rank)
	shardRegion := region{b: buf, strides: cStrides(a.p.grid), origin: zero}
	chunkBytes := prod(s.inner) * es
	err = parallel(context.Background(), runtime.GOMAXPROCS(0), n, func(_ context.Context, j int) error {
		c := make([]int, rank)
		for d, r := rank-1, j; d >= 0; d-- {
			c[d] = r % counts[d] * s.inner[d]
			r /= counts[d]
		}
		if rs, ok := encodeRuns(&s.codecs, shardRegion, c, s.inner, box{lo: c, hi: addTo(c, s.inner)}, es); ok {
			// Encoded from the shard's rows: no copy of the chunk.
			if rs.allFill(a.p.fill) {
				return nil
			}
			into := getBuf(encodeBound(chunkBytes))
			enc, err := encodeArrayRuns(&s.codecs, rs, into)
			encoded[j] = enc
			holdIfEncoded(&held[j][1], into, enc, err)
			return err
		}
		chunk := getBuf(chunkBytes)
		copyBox(region{b: chunk, strides: cStrides(s.inner), origin: c}, shardRegion, box{lo: c, hi: addTo(c, s.inner)}, es)
		if allFill(chunk, a.p.fill) {
			putBuf(chunk)
			return nil
		}
		into := getBuf(encodeBound(chunkBytes))
		enc, err := encodeArrayInto(&s.codecs, chunk, s.inner, a.p.DType, into)
		encoded[j] = enc
		// Codecs that change nothing (bytes in the host's order, no
		// compression) return the chunk itself, which is then the
		// encoded chunk's memory: given back, another chunk would
		// overwrite it before the shard is laid out.
		for k, b := range [][]byte{chunk, into} {
			holdIfEncoded(&held[j][k], b, enc, err)
		}
		return err
	})
	if err != nil {
		return nil, release, err
	}
	var order binary.ByteOrder = binary.LittleEndian
	if s.index.big {
		order = binary.BigEndian
	}
	index := make([]byte, 16*n)
	size := 0 // the body's
	for j, enc := range encoded {
		off, nb := uint64(emptyChunk), uint64(emptyChunk)
		if enc != nil {
			off, nb = uint64(base+size), uint64(len(enc))
			size += len(enc)
		}
		order.PutUint64(index[16*j:], off)
		order.PutUint64(index[16*j+8:], nb)
	}
	for _, bc := range s.index.bytes {
		if index, err = bc.encode(index); err != nil {
			return nil, release, err
		}
	}
	pieces = make([][]byte, 0, n+1)
	if s.indexAtStart {
		pieces = append(pieces, index)
	}
	for _, enc := range encoded {
		if enc != nil {
			pieces = append(pieces, enc)
		}
	}
	if !s.indexAtStart {
		pieces = append(pieces, index)
	}
	return pieces, release, nil
}
