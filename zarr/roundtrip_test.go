package zarr_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

// memStore is a Store in memory that counts its calls.
type memStore struct {
	mu              sync.Mutex
	m               map[string][]byte
	gets, getRanges int
}

func newMemStore() *memStore { return &memStore{m: map[string][]byte{}} }

func (s *memStore) Get(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	b, ok := s.m[key]
	if !ok {
		return nil, fmt.Errorf("%w: %s", zarr.ErrNotFound, key)
	}
	return slices.Clone(b), nil
}

func (s *memStore) GetRange(_ context.Context, key string, off, n int64) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.getRanges++
	b, ok := s.m[key]
	if !ok {
		return nil, fmt.Errorf("%w: %s", zarr.ErrNotFound, key)
	}
	if off < 0 {
		off = int64(len(b)) - n
	}
	if off < 0 || n < 0 || off+n > int64(len(b)) {
		return nil, &zarr.FormatError{Key: key, Msg: "range outside the value"}
	}
	return slices.Clone(b[off : off+n]), nil
}

func (s *memStore) Put(_ context.Context, key string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = slices.Clone(data)
	return nil
}

func (s *memStore) List(_ context.Context, prefix string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for k := range s.m {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

func (s *memStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

var allDTypes = append(slices.Clone(nd.DTypes), nd.ComplexDTypes...)

// randomArray fills an array with random values, some of them the fill
// value (whole stretches, so that some chunks hold only it).
func randomArray(t testing.TB, r *rand.Rand, dt nd.DType, shape []int, fill float64) nd.Array {
	a, err := nd.New(dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	n := a.Len()
	vals := make([]float64, n)
	im := make([]float64, n)
	lo, hi := dt.Part().Range()
	lo, hi = math.Max(lo, -3e4), math.Min(hi, 3e4)
	zeroFrom := r.IntN(n + 1)
	for i := range vals {
		if i >= zeroFrom && r.IntN(4) > 0 {
			vals[i] = fill
			continue
		}
		vals[i] = lo + r.Float64()*(hi-lo)
		im[i] = r.NormFloat64()
	}
	if dt.IsComplex() {
		nd.StoreComplex(a.Data, 0, 1, vals, make([]float64, n))
	} else {
		nd.Store(a.Data, 0, 1, vals)
	}
	return a
}

func randomShape(r *rand.Rand, rank, max int) []int {
	s := make([]int, rank)
	for i := range s {
		s[i] = 1 + r.IntN(max)
	}
	return s
}

// randomMeta draws the layout and codecs of an array.
func randomMeta(r *rand.Rand, dt nd.DType, shape []int) zarr.Meta {
	m := zarr.Meta{Format: 2 + r.IntN(2), Shape: shape, DType: dt, BigEndian: r.IntN(2) == 0, FortranOrder: r.IntN(3) == 0}
	m.ChunkShape = make([]int, len(shape))
	for i, s := range shape {
		m.ChunkShape[i] = 1 + r.IntN(s+1)
	}
	if m.Format == 3 && r.IntN(2) == 0 {
		m.ShardShape = make([]int, len(shape))
		for i, c := range m.ChunkShape {
			m.ShardShape[i] = c * (1 + r.IntN(3))
		}
	}
	if m.Format == 3 {
		m.Checksum = r.IntN(3) == 0
	}
	comps := []zarr.Compressor{{}, {Name: "gzip"}, {Name: "zlib", Level: 1}, {Name: "zstd"}, {Name: "zstd", Level: 9}}
	for _, cname := range []string{"lz4", "lz4hc", "zstd", "zlib"} {
		comps = append(comps, zarr.Compressor{Name: "blosc", BloscName: cname, Shuffle: zarr.ByteShuffle},
			zarr.Compressor{Name: "blosc", BloscName: cname, Shuffle: zarr.BitShuffle},
			zarr.Compressor{Name: "blosc", BloscName: cname, BloscNoShuffle: true})
	}
	m.Compressor = comps[r.IntN(len(comps))]
	m.FillValue = []float64{0, 0, 3, -1, math.NaN(), math.Inf(1)}[r.IntN(6)]
	if dt.IsInteger() && (math.IsNaN(m.FillValue) || math.IsInf(m.FillValue, 0) || (m.FillValue < 0 && strings.HasPrefix(dt.String(), "u"))) {
		m.FillValue = 0
	}
	if r.IntN(3) == 0 {
		m.Separator = "."
	}
	return m
}

// cases is the number of random arrays a property test draws:
// ZARR_CASES overrides it.
func cases(def int) int {
	if n, err := strconv.Atoi(os.Getenv("ZARR_CASES")); err == nil && n > 0 {
		return n
	}
	return def
}

// TestRoundTrip writes random arrays of every dtype with random layouts
// and codecs (v2 and v3, sharded or not), whole or shard by shard, and
// reads them back whole and in random regions.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	n := cases(300)
	for i := range n {
		r := rand.New(rand.NewPCG(uint64(i), 30))
		dt := allDTypes[r.IntN(len(allDTypes))]
		rank := r.IntN(5)
		shape := randomShape(r, rank, []int{1, 40, 12, 7, 5}[rank])
		m := randomMeta(r, dt, shape)
		name := fmt.Sprintf("case %d: %v %v v%d chunk %v shard %v %+v big=%v F=%v fill=%v", i, dt, shape, m.Format, m.ChunkShape, m.ShardShape, m.Compressor, m.BigEndian, m.FortranOrder, m.FillValue)
		s := newMemStore()
		path := []string{"", "a", "g/h/arr"}[r.IntN(3)]
		a, err := zarr.Create(ctx, s, path, m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := randomArray(t, r, dt, shape, m.FillValue)
		if r.IntN(2) == 0 {
			err = a.WriteRegion(ctx, make([]int, rank), want)
		} else {
			err = writeByShard(ctx, a, want)
		}
		if err != nil {
			t.Fatalf("%s: write: %v", name, err)
		}
		b, err := zarr.Open(ctx, s, path)
		if err != nil {
			t.Fatalf("%s: open: %v", name, err)
		}
		got, err := b.ReadAll(ctx)
		if err != nil {
			t.Fatalf("%s: read: %v", name, err)
		}
		if !sameBits(got, want) {
			t.Fatalf("%s: read back\n got %v\nwant %v", name, got.Data, want.Data)
		}
		checkMeta(t, name, b.Meta(), m)
		for range 3 {
			start, size := make([]int, rank), make([]int, rank)
			for d := range rank {
				start[d] = r.IntN(shape[d])
				size[d] = r.IntN(shape[d] - start[d] + 1)
			}
			part, _ := nd.New(dt, size...)
			if err := b.ReadRegion(ctx, start, size, part); err != nil {
				t.Fatalf("%s: region %v %v: %v", name, start, size, err)
			}
			if !sameBits(part, sub(t, want, start, size)) {
				t.Fatalf("%s: region %v %v differs", name, start, size)
			}
			checkReadRegionAt(t, r, name, b, start, part)
		}
	}
	t.Logf("%d random arrays", n)
}

// checkReadRegionAt reads the region at start (part holds it) with
// ReadRegionAt into a box of a larger array, its other bytes guard bytes:
// the box holds part, and the guard bytes are as they were.
func checkReadRegionAt(t *testing.T, r *rand.Rand, name string, a *zarr.Array, start []int, part nd.Array) {
	t.Helper()
	rank := len(start)
	big, at := make([]int, rank), make([]int, rank)
	for d := range rank {
		at[d] = r.IntN(3)
		big[d] = at[d] + part.Shape[d] + r.IntN(3)
	}
	dst, _ := nd.New(part.DType(), big...)
	guard := bytes.Repeat([]byte{0xA5}, len(dst.Bytes()))
	copy(dst.Bytes(), guard)
	if err := a.ReadRegionAt(context.Background(), start, part.Shape, dst, at); err != nil {
		t.Fatalf("%s: ReadRegionAt %v %v at %v of %v: %v", name, start, part.Shape, at, big, err)
	}
	if !sameBits(subArray(dst, at, part.Shape), part) {
		t.Fatalf("%s: ReadRegionAt %v %v at %v of %v: the box differs from ReadRegion's", name, start, part.Shape, at, big)
	}
	// The guard put back over the box: the rest must be untouched.
	restore(dst, guard[:len(part.Bytes())], at, part.Shape)
	if !bytes.Equal(dst.Bytes(), guard) {
		t.Fatalf("%s: ReadRegionAt %v %v at %v of %v wrote outside its box", name, start, part.Shape, at, big)
	}
}

// restore copies src (C-order elements of a box of shape) into the box
// at at of dst, element by element.
func restore(dst nd.Array, src []byte, at, shape []int) {
	es := dst.DType().Size()
	b := dst.Bytes()
	for i := range len(src) / es {
		rem, off, stride := i, 0, 1
		for d := len(at) - 1; d >= 0; d-- {
			off += (at[d] + rem%shape[d]) * stride
			rem /= shape[d]
			stride *= dst.Shape[d]
		}
		copy(b[off*es:(off+1)*es], src[i*es:(i+1)*es])
	}
}

func checkMeta(t *testing.T, name string, got, want zarr.Meta) {
	t.Helper()
	if got.Format != want.Format || !slices.Equal(got.ShardShape, want.ShardShape) || got.Compressor.Name != want.Compressor.Name ||
		(want.DType.Size() > 1 && got.BigEndian != want.BigEndian) || got.Checksum != want.Checksum {
		t.Errorf("%s: metadata read back as %+v", name, got)
	}
	if g, w := got.FillValue, want.FillValue; g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
		t.Errorf("%s: fill value %v, want %v", name, g, w)
	}
}

// writeByShard writes a whole array one WriteChunk per shard.
func writeByShard(ctx context.Context, a *zarr.Array, src nd.Array) error {
	grid, shard := a.GridShape(), a.ShardShape()
	idx := make([]int, len(grid))
	for {
		start, size := make([]int, len(idx)), make([]int, len(idx))
		for d := range idx {
			start[d] = idx[d] * shard[d]
			size[d] = min(shard[d], src.Shape[d]-start[d])
		}
		if err := a.WriteChunk(ctx, idx, subArray(src, start, size)); err != nil {
			return err
		}
		d := len(idx) - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < grid[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return nil
		}
	}
}

func sub(t testing.TB, a nd.Array, start, size []int) nd.Array {
	return subArray(a, start, size)
}

// subArray copies a region of a, element by element (the slow, simple
// way).
func subArray(a nd.Array, start, size []int) nd.Array {
	out, _ := nd.New(a.DType(), size...)
	es := a.DType().Size()
	src, dst := a.Bytes(), out.Bytes()
	n := out.Len()
	for i := range n {
		rem, off := i, 0
		stride := 1
		for d := len(size) - 1; d >= 0; d-- {
			off += (start[d] + rem%size[d]) * stride
			rem /= size[d]
			stride *= a.Shape[d]
		}
		copy(dst[i*es:(i+1)*es], src[off*es:(off+1)*es])
	}
	return out
}

// TestShardRangedRead reads one chunk of a large shard: the index and the
// chunk by ranged reads, never the whole shard.
func TestShardRangedRead(t *testing.T) {
	ctx := context.Background()
	s := newMemStore()
	a, err := zarr.Create(ctx, s, "vol", zarr.Meta{Shape: []int{16, 16, 16}, DType: nd.Uint16, ChunkShape: []int{4, 4, 4},
		ShardShape: []int{16, 16, 16}, Compressor: zarr.Compressor{Name: "zstd"}})
	if err != nil {
		t.Fatal(err)
	}
	want := randomArray(t, rand.New(rand.NewPCG(1, 2)), nd.Uint16, []int{16, 16, 16}, 0)
	if err := a.WriteRegion(ctx, []int{0, 0, 0}, want); err != nil {
		t.Fatal(err)
	}
	s.gets, s.getRanges = 0, 0
	part, _ := nd.New(nd.Uint16, 3, 2, 4)
	if err := a.ReadRegion(ctx, []int{5, 9, 4}, []int{3, 2, 4}, part); err != nil {
		t.Fatal(err)
	}
	if !sameBits(part, subArray(want, []int{5, 9, 4}, []int{3, 2, 4})) {
		t.Fatal("region differs")
	}
	if s.gets != 0 || s.getRanges != 2 {
		t.Errorf("%d gets and %d ranged reads; want 0 and 2 (the index, one chunk)", s.gets, s.getRanges)
	}
}

// TestEmptyChunksNotStored checks that a shard or chunk holding only the
// fill value is not stored (and one stored before is deleted).
func TestEmptyChunksNotStored(t *testing.T) {
	ctx := context.Background()
	for _, shard := range [][]int{nil, {4, 4}} {
		s := newMemStore()
		a, err := zarr.Create(ctx, s, "", zarr.Meta{Shape: []int{8, 4}, DType: nd.Float32, ChunkShape: []int{2, 4}, ShardShape: shard, FillValue: math.NaN()})
		if err != nil {
			t.Fatal(err)
		}
		full, _ := nd.New(nd.Float32, 8, 4)
		if err := a.WriteRegion(ctx, []int{0, 0}, full); err != nil {
			t.Fatal(err)
		}
		before := len(s.m)
		nan := full.Data.([]float32)
		for i := range nan {
			nan[i] = float32(math.NaN())
		}
		if err := a.WriteRegion(ctx, []int{0, 0}, full); err != nil {
			t.Fatal(err)
		}
		if len(s.m) != 1 || before == 1 {
			t.Errorf("shard %v: %d keys after writing only the fill value (%d before); want the metadata alone", shard, len(s.m), before)
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	s := newMemStore()
	a, err := zarr.Create(ctx, s, "x", zarr.Meta{Shape: []int{4, 4}, DType: nd.Int32, ChunkShape: []int{2, 2}, ShardShape: []int{4, 4}, Checksum: true})
	if err != nil {
		t.Fatal(err)
	}
	src := randomArray(t, rand.New(rand.NewPCG(3, 4)), nd.Int32, []int{4, 4}, 1e9)
	if err := a.WriteRegion(ctx, []int{0, 0}, src); err != nil {
		t.Fatal(err)
	}
	if _, err := zarr.Create(ctx, s, "x", zarr.Meta{Shape: []int{1}, DType: nd.Uint8}); err == nil {
		t.Error("Create over an existing array succeeded")
	}
	if _, err := zarr.Open(ctx, s, ""); err == nil || !strings.Contains(err.Error(), "group") {
		t.Errorf("opening the root group: %v; want an error naming a group", err)
	}
	if _, err := zarr.Open(ctx, s, "nothing"); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("opening a missing path: %v", err)
	}
	// A flipped byte in a chunk: the chunk's checksum fails, naming it.
	key := "x/c/0/0"
	b := s.m[key]
	b[3] ^= 1
	_, err = a.ReadAll(ctx)
	var fe *zarr.FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "crc32c") {
		t.Errorf("reading a corrupt chunk: %v; want a FormatError naming %s and crc32c", err, key)
	}
	// A truncated shard.
	s.m[key] = b[:5]
	if _, err := a.ReadAll(ctx); !errors.As(err, &fe) {
		t.Errorf("reading a truncated shard: %v", err)
	}
	// Bad arguments.
	dst, _ := nd.New(nd.Int32, 2, 2)
	for _, c := range []struct{ start, shape []int }{{[]int{3, 0}, []int{2, 2}}, {[]int{0}, []int{2}}, {[]int{-1, 0}, []int{2, 2}}} {
		var ae *zarr.ArgumentError
		if err := a.ReadRegion(ctx, c.start, c.shape, dst); !errors.As(err, &ae) {
			t.Errorf("ReadRegion(%v, %v): %v; want an ArgumentError", c.start, c.shape, err)
		}
	}
	if err := a.WriteRegion(ctx, []int{1, 0}, dst); err == nil {
		t.Error("an unaligned WriteRegion succeeded")
	}
	for _, m := range []zarr.Meta{
		{Shape: []int{4}, DType: nd.Uint8, ChunkShape: []int{0}},
		{Shape: []int{4}, DType: nd.Uint8, ChunkShape: []int{2}, ShardShape: []int{3}},
		{Format: 2, Shape: []int{4}, DType: nd.Uint8, ShardShape: []int{4}},
		{Shape: []int{4}, DType: nd.Uint8, Compressor: zarr.Compressor{Name: "lzma"}},
		{Shape: []int{1 << 20, 1 << 20}, DType: nd.Uint8, ChunkShape: []int{1 << 20, 1 << 20}},
	} {
		if _, err := zarr.Create(ctx, newMemStore(), "", m); err == nil {
			t.Errorf("Create(%+v) succeeded", m)
		}
	}
}

// TestDirStore runs a round trip through a directory, and checks that a
// key cannot leave it.
func TestDirStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := zarr.NewDirStore(dir + "/out.zarr")
	a, err := zarr.Create(ctx, s, "g/arr", zarr.Meta{Shape: []int{5, 6}, DType: nd.Float64, ChunkShape: []int{2, 3}, ShardShape: []int{4, 6}, Compressor: zarr.Compressor{Name: "blosc"}})
	if err != nil {
		t.Fatal(err)
	}
	want := randomArray(t, rand.New(rand.NewPCG(5, 6)), nd.Float64, []int{5, 6}, 0)
	if err := a.WriteRegion(ctx, []int{0, 0}, want); err != nil {
		t.Fatal(err)
	}
	b, err := zarr.Open(ctx, zarr.NewDirStore(dir+"/out.zarr"), "g/arr")
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.ReadAll(ctx)
	if err != nil || !sameBits(got, want) {
		t.Fatalf("read back: %v", err)
	}
	keys, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"g/arr/c/0/0", "g/arr/c/1/0", "g/arr/zarr.json", "g/zarr.json", "zarr.json"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	for _, k := range []string{"../x", "/etc/passwd", "a/../../x", ""} {
		if _, err := s.Get(ctx, k); err == nil || errors.Is(err, zarr.ErrNotFound) {
			t.Errorf("Get(%q): %v; want a refusal", k, err)
		}
	}
	if err := zarr.Remove(ctx, s, "g"); err != nil {
		t.Fatal(err)
	}
	if keys, _ := s.List(ctx, ""); !slices.Equal(keys, []string{"zarr.json"}) {
		t.Errorf("after Remove: %v", keys)
	}
}

// TestShardSharedBytes reads a shard whose index points two chunks at the
// same bytes (a writer may store identical chunks once): both read right,
// big-endian.
func TestShardSharedBytes(t *testing.T) {
	ctx := context.Background()
	s := newMemStore()
	a, err := zarr.Create(ctx, s, "", zarr.Meta{Shape: []int{2, 4}, DType: nd.Uint16, ChunkShape: []int{2, 2}, ShardShape: []int{2, 4}, BigEndian: true})
	if err != nil {
		t.Fatal(err)
	}
	src, _ := nd.FromSlice([]uint16{1, 2, 1, 2, 3, 4, 3, 4}, 2, 4)
	if err := a.WriteRegion(ctx, []int{0, 0}, src); err != nil {
		t.Fatal(err)
	}
	// Point the second chunk at the first's bytes, and drop its own.
	b := s.m["c/0/0"]
	index := b[len(b)-36 : len(b)-4]
	copy(index[16:32], index[0:16])
	crc := crc32.Checksum(index, crc32.MakeTable(crc32.Castagnoli))
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc)
	got, err := a.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint16{1, 2, 1, 2, 3, 4, 3, 4}; !slices.Equal(got.Data.([]uint16), want) {
		t.Errorf("read %v, want %v", got.Data, want)
	}
}

// TestShardBytesAnyCores: a shard's chunks are encoded (and, read whole,
// decoded) on every core, and the stored bytes are the same on one core
// as on eight — chunks laid out in C order, empty ones left out — and
// read back equal.
func TestShardBytesAnyCores(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(27, 11))
	src, _ := nd.New(nd.Float32, 24, 20, 18)
	v := src.Data.([]float32)
	for i := range v {
		if i%7 < 4 && i < len(v)/2 { // some chunks all fill
			v[i] = float32(rng.IntN(9))
		}
	}
	var stored []map[string][]byte
	for _, procs := range []int{1, 8} {
		old := runtime.GOMAXPROCS(procs)
		s := newMemStore()
		a, err := zarr.Create(ctx, s, "", zarr.Meta{Shape: src.Shape, DType: nd.Float32, ChunkShape: []int{4, 5, 6}, ShardShape: []int{24, 20, 18}, Compressor: zarr.Compressor{Name: "zstd"}})
		if err == nil {
			err = a.WriteRegion(ctx, []int{0, 0, 0}, src)
		}
		var got nd.Array
		if err == nil {
			got, err = a.ReadAll(ctx)
		}
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), src.Bytes()) {
			t.Errorf("GOMAXPROCS %d: read back differs", procs)
		}
		stored = append(stored, s.m)
	}
	if len(stored[0]) != len(stored[1]) {
		t.Fatalf("%d keys on one core, %d on eight", len(stored[0]), len(stored[1]))
	}
	for k, b := range stored[0] {
		if !bytes.Equal(b, stored[1][k]) {
			t.Errorf("%s: %d bytes on one core, %d on eight, or other bytes", k, len(b), len(stored[1][k]))
		}
	}
}

// TestWriteRegionShardsInPlace: a region whose shards lie in it whole
// and contiguous (rows of shards along the first axis) is encoded from
// the region's own memory; other regions from a copy. Each way stores
// the bytes that WriteChunk stores shard by shard, leaves the caller's
// array as it was, and reads back equal — in both byte orders, with some
// shards and chunks all fill.
func TestWriteRegionShardsInPlace(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(28, 12))
	shape, shard := []int{12, 6, 8}, []int{4, 6, 4}
	src, _ := nd.New(nd.Uint16, shape...)
	v := src.Data.([]uint16)
	for i := range v {
		if i >= len(v)/3 { // the first shards and chunks all fill
			v[i] = uint16(rng.IntN(1 << 16))
		}
	}
	keep := slices.Clone(v)
	for _, big := range []bool{false, true} {
		meta := zarr.Meta{Shape: shape, DType: nd.Uint16, ChunkShape: []int{2, 3, 2}, ShardShape: shard, BigEndian: big, Compressor: zarr.Compressor{Name: "zstd"}}
		byChunk := newMemStore()
		a, err := zarr.Create(ctx, byChunk, "", meta)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			for k := range 2 {
				part, _ := nd.New(nd.Uint16, shard...)
				p := part.Data.([]uint16)
				for z := range 4 {
					for y := range 6 {
						copy(p[(z*6+y)*4:(z*6+y+1)*4], v[((i*4+z)*6+y)*8+k*4:])
					}
				}
				if err := a.WriteChunk(ctx, []int{i, 0, k}, part); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, region := range [][2][]int{
			{{0, 0, 0}, shape},     // rows of two shards side by side: copies
			{{4, 0, 0}, {8, 6, 8}}, // the same, from the second row
			{{4, 0, 4}, {8, 6, 4}}, // a column of shards: in place
			{{8, 0, 0}, {4, 6, 4}}, // one shard: in place
		} {
			s := newMemStore()
			b, err := zarr.Create(ctx, s, "", meta)
			if err != nil {
				t.Fatal(err)
			}
			start, n := region[0], region[1]
			part, _ := nd.New(nd.Uint16, n...)
			p := part.Data.([]uint16)
			for z := range n[0] {
				for y := range n[1] {
					copy(p[(z*n[1]+y)*n[2]:(z*n[1]+y+1)*n[2]], v[((start[0]+z)*6+start[1]+y)*8+start[2]:])
				}
			}
			before := slices.Clone(p)
			if err := b.WriteRegion(ctx, start, part); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p, before) {
				t.Errorf("big-endian %v, region at %v of %v: WriteRegion changed the caller's array", big, start, n)
			}
			for k, got := range s.m {
				if k == "zarr.json" {
					continue
				}
				if want, ok := byChunk.m[k]; !ok || !bytes.Equal(got, want) {
					t.Errorf("big-endian %v, region at %v of %v: %s differs from WriteChunk's", big, start, n, k)
				}
			}
		}
		got, err := a.ReadAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Data.([]uint16), keep) {
			t.Errorf("big-endian %v: read back differs", big)
		}
	}
}

// TestShardUncompressedChunks: where the codecs change nothing (no
// compression, the host's byte order) a chunk's encoded bytes are the
// chunk buffer itself, which must not be handed to another chunk of the
// shard encoded meanwhile on another core. (It was: about one write in
// twenty put a neighbour's values in a shard's first chunk.)
func TestShardUncompressedChunks(t *testing.T) {
	ctx := context.Background()
	src, _ := nd.New(nd.Int16, 512)
	for i, v := 0, src.Data.([]int16); i < len(v); i++ {
		v[i] = int16(i + 1)
	}
	old := runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0)))
	defer runtime.GOMAXPROCS(old)
	for round := range 100 {
		a, err := zarr.Create(ctx, newMemStore(), "", zarr.Meta{Shape: src.Shape, DType: nd.Int16, ChunkShape: []int{2}, ShardShape: []int{512}})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.WriteRegion(ctx, []int{0}, src); err != nil {
			t.Fatal(err)
		}
		got, err := a.ReadAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), src.Bytes()) {
			t.Fatalf("round %d: the shard read back differs from what was written", round)
		}
	}
}
