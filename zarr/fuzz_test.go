package zarr

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ndconv/ndconv/nd"
)

// seedFiles adds the fixtures' files whose names match to f's corpus.
func seedFiles(f *testing.F, match func(path string) bool, limit int) {
	n := 0
	filepath.WalkDir("testdata", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || n >= limit || !match(p) {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && len(b) < 1<<14 {
			f.Add(b)
			n++
		}
		return nil
	})
}

// FuzzReadMetadata parses arbitrary bytes as v3 and v2 array metadata and
// as OME-Zarr attributes: errors, never a panic, and metadata that parses
// writes back to metadata that parses the same.
func FuzzReadMetadata(f *testing.F) {
	seedFiles(f, func(p string) bool {
		return strings.HasSuffix(p, "zarr.json") || strings.HasSuffix(p, ".zarray") || strings.HasSuffix(p, ".zattrs")
	}, 40)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, parse := range []func(string, []byte) (*parsed, error){parseV3, parseV2} {
			p, err := parse("k", b)
			if err != nil {
				continue
			}
			if p.DType.Size()*prod(p.grid) > MaxChunkBytes {
				t.Fatalf("a chunk of %v × %v passed the bound", p.grid, p.DType)
			}
			m := p.Meta
			if m.ShardShape == nil || m.Format == 3 {
				if m2, err := m.normalize(); err == nil {
					if _, err := m2.encodeMeta(); err != nil && !strings.Contains(err.Error(), "written") {
						t.Fatalf("metadata read does not write: %v", err)
					}
				}
			}
		}
		parseMultiscales("k", map[string]jsonRaw{"multiscales": b, "ome": b})
	})
}

// fuzzChains are the codec chains FuzzDecodeChunk decodes with.
var fuzzChains = []string{
	`[{"name":"bytes","configuration":{"endian":"little"}}]`,
	`[{"name":"bytes","configuration":{"endian":"big"}},{"name":"gzip","configuration":{"level":1}}]`,
	`[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes"},{"name":"zstd","configuration":{"level":1}}]`,
	`[{"name":"bytes"},{"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":4}}]`,
	`[{"name":"bytes"},{"name":"zlib","configuration":{"level":1}},{"name":"crc32c"}]`,
}

func fuzzChain(t testing.TB, i int) chain {
	var codecs []rawCodec
	if err := jsonUnmarshal([]byte(fuzzChains[i]), &codecs); err != nil {
		t.Fatal(err)
	}
	c, err := parseChain("k", codecs, []int{6, 5}, nd.Float32)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// FuzzDecodeChunk decodes arbitrary bytes as a 6×5 float32 chunk through
// each codec chain: errors, never a panic, and never more than the
// chunk's bytes.
func FuzzDecodeChunk(f *testing.F) {
	chunk := make([]byte, 6*5*4)
	for i := range chunk {
		chunk[i] = byte(i * 7 % 13)
	}
	for i := range fuzzChains {
		c := fuzzChain(f, i)
		enc, err := encodeArray(&c, chunk, []int{6, 5}, nd.Float32)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(byte(i), enc)
	}
	f.Fuzz(func(t *testing.T, which byte, b []byte) {
		c := fuzzChain(t, int(which)%len(fuzzChains))
		out, strides, err := decodeArray("k", &c, b, []int{6, 5}, nd.Float32)
		if err == nil && (len(out) != len(chunk) || len(strides) != 2) {
			t.Fatalf("decoded %d bytes, strides %v", len(out), strides)
		}
	})
}

// fuzzStore is a Store of one shard in memory.
type fuzzStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *fuzzStore) Get(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.m[key]; ok {
		return slices.Clone(b), nil
	}
	return nil, fmt.Errorf("%w: %s", ErrNotFound, key)
}

func (s *fuzzStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	b, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if off < 0 {
		off = int64(len(b)) - n
	}
	if off < 0 || n < 0 || off > int64(len(b)) || n > int64(len(b))-off {
		return nil, &FormatError{Key: key, Msg: "range"}
	}
	return b[off : off+n], nil
}

func (s *fuzzStore) Put(_ context.Context, key string, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = slices.Clone(b)
	return nil
}

func (s *fuzzStore) List(context.Context, string) ([]string, error) { return nil, nil }
func (s *fuzzStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

// FuzzDecodeShard reads arbitrary bytes as a shard (index at the end or
// the start), whole and by ranged reads of one chunk: errors, never a
// panic.
func FuzzDecodeShard(f *testing.F) {
	ctx := context.Background()
	metas := []Meta{
		{Shape: []int{8, 6}, DType: nd.Int16, ChunkShape: []int{4, 3}, ShardShape: []int{8, 6}, Compressor: Compressor{Name: "zstd"}},
		{Shape: []int{8, 6}, DType: nd.Int16, ChunkShape: []int{4, 3}, ShardShape: []int{8, 6}, Checksum: true},
	}
	arrays := make([]*Array, len(metas))
	for i, m := range metas {
		s := &fuzzStore{m: map[string][]byte{}}
		a, err := Create(ctx, s, "", m)
		if err != nil {
			f.Fatal(err)
		}
		src, _ := nd.New(nd.Int16, 8, 6)
		for j := range src.Data.([]int16) {
			src.Data.([]int16)[j] = int16(j*j - 9)
		}
		if err := a.WriteRegion(ctx, []int{0, 0}, src); err != nil {
			f.Fatal(err)
		}
		f.Add(byte(i), s.m["c/0/0"])
		arrays[i] = a
	}
	// An index without a checksum, at the start: the fuzzer reaches its
	// offsets.
	p, err := parseV3("zarr.json", []byte(`{"zarr_format":3,"node_type":"array","shape":[8,6],"data_type":"int16",
		"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[8,6]}},"chunk_key_encoding":{"name":"default"},
		"fill_value":0,"codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[4,3],
		"codecs":[{"name":"bytes","configuration":{"endian":"big"}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],
		"index_location":"start"}}]}`))
	if err != nil {
		f.Fatal(err)
	}
	raw := &Array{store: &fuzzStore{m: map[string][]byte{}}, p: p}
	src, _ := nd.New(nd.Int16, 8, 6)
	src.Data.([]int16)[7] = 5
	if err := raw.WriteRegion(ctx, []int{0, 0}, src); err != nil {
		f.Fatal(err)
	}
	f.Add(byte(len(arrays)), raw.store.(*fuzzStore).m["c/0/0"])
	arrays = append(arrays, raw)
	f.Fuzz(func(t *testing.T, which byte, b []byte) {
		a := arrays[int(which)%len(arrays)]
		s := &fuzzStore{m: map[string][]byte{"c/0/0": b}}
		a = &Array{store: s, path: a.path, p: a.p}
		a.ReadAll(ctx)
		dst, _ := nd.New(nd.Int16, 2, 2)
		a.ReadRegion(ctx, []int{5, 1}, []int{2, 2}, dst)
	})
}

// FuzzBlosc decodes arbitrary bytes as blosc: errors, never a panic, and
// never more than the limit; what decodes, encodes and decodes again to
// the same bytes.
func FuzzBlosc(f *testing.F) {
	seedFiles(f, func(p string) bool { return strings.Contains(p, "blosc") && !strings.Contains(p, ".z") }, 60)
	for _, c := range []bloscCodec{{cname: "lz4", shuffle: ByteShuffle, typesize: 4}, {cname: "zstd", shuffle: BitShuffle, typesize: 2, blocksize: 64}} {
		src := make([]byte, 1000)
		for i := range src {
			src[i] = byte(i / 10)
		}
		b, err := c.encode(src)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := bloscDecode(b, nil, 1<<16)
		if err != nil {
			return
		}
		if len(out) > 1<<16 {
			t.Fatalf("decoded %d bytes past the limit", len(out))
		}
		for _, sh := range []Shuffle{NoShuffle, ByteShuffle, BitShuffle} {
			c := bloscCodec{cname: "lz4", shuffle: sh, typesize: max(1, int(b[3])), blocksize: 96}
			enc, err := c.encode(out)
			if err != nil {
				t.Fatal(err)
			}
			back, err := bloscDecode(enc, nil, len(out))
			if err != nil || !slices.Equal(back, out) {
				t.Fatalf("re-encoded with %+v: %v", c, err)
			}
		}
	})
}

// FuzzBlosclz decodes arbitrary bytes as blosclz into a 4 KiB buffer:
// errors, never a panic or a write past it.
func FuzzBlosclz(f *testing.F) {
	f.Add([]byte{3, 'a', 'b', 'c', 'd'})
	f.Add([]byte{0, 'a', 0xe0, 10, 0, 1, 'x', 'y'})
	f.Fuzz(func(t *testing.T, b []byte) {
		dst := make([]byte, 4096)
		n, err := blosclzDecode(b, dst)
		if err == nil && (n < 0 || n > len(dst)) {
			t.Fatalf("wrote %d bytes", n)
		}
	})
}

type jsonRaw = json.RawMessage

var jsonUnmarshal = json.Unmarshal
