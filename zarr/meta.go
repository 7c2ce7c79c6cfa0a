package zarr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ndconv/ndconv/nd"
)

// maxRank bounds the number of axes metadata may name.
const maxRank = 32

// Compressor names a chunk's compression for Create: Name "" stores chunks
// uncompressed.
type Compressor struct {
	// Name is "zstd", "gzip", "zlib", "blosc" or "" (none).
	Name string
	// Level is the compression level (0: the codec's default: zstd 3,
	// gzip and zlib 6, blosc 5).
	Level int
	// Blosc's inner compressor ("lz4", the default, "lz4hc", "zstd",
	// "zlib") and shuffle (ByteShuffle by default for elements of more
	// than one byte; set NoShuffle with BloscNoShuffle).
	BloscName      string
	Shuffle        Shuffle
	BloscNoShuffle bool
}

// Meta describes an array: what Create writes and what Open found.
type Meta struct {
	// Format is the Zarr version, 2 or 3 (0 means 3).
	Format int
	Shape  []int
	DType  nd.DType
	// ChunkShape is the shape of a chunk, the unit compressed and read on
	// its own.
	ChunkShape []int
	// ShardShape, when not nil, makes a v3 array sharded: each stored
	// value holds a shard of this shape (a whole number of chunks per
	// axis) with an index of its chunks, so that a writer writes each
	// shard once and a reader can fetch one chunk of it. Nil for v2.
	ShardShape []int
	// Compressor compresses each chunk (the first compressor found, for an
	// array opened).
	Compressor Compressor
	// Checksum appends a CRC-32C to each chunk (v3 only; a shard's index
	// always has one when this package writes it).
	Checksum bool
	// BigEndian stores elements big-endian.
	BigEndian bool
	// FortranOrder stores each chunk with the first axis fastest (v2's
	// order "F", v3's transpose codec reversing the axes).
	FortranOrder bool
	// FillValue is the value of elements no chunk holds (its real part,
	// for a complex array; v3's "NaN" and "±Infinity" included).
	FillValue float64
	// Separator joins a chunk key's indices: "/" (v3's default) or "."
	// (v2's default).
	Separator string
	// DimensionNames names the axes (v3), or is nil.
	DimensionNames []string
	// Attributes are the array's user attributes (v3's "attributes", v2's
	// .zattrs), as JSON.
	Attributes map[string]json.RawMessage
}

// chain is a chunk's codec chain, from the array to the stored bytes.
type chain struct {
	perm  []int // the transpose: stored axis i is the chunk's axis perm[i]; nil for none
	big   bool  // elements big-endian
	shard *shardCodec
	bytes []bytesCodec // bytes-to-bytes codecs, in the order they encode
}

// shardCodec is sharding_indexed: a shard of chunks of shape inner, each
// encoded with codecs, and an index encoded with index.
type shardCodec struct {
	inner        []int
	codecs       chain
	index        chain
	indexAtStart bool
}

// meta holds what Open parsed: the public description and the machinery.
type parsed struct {
	Meta
	fill  []byte // one element in the machine's byte order
	outer chain  // the codecs of one stored value (a chunk, or a shard)
	grid  []int  // the shape of one stored value: ShardShape or ChunkShape
	key   func(idx []int) string
}

type rawCodec struct {
	Name          string          `json:"name"`
	Configuration json.RawMessage `json:"configuration"`
}

// UnmarshalJSON accepts a codec as an object or as its bare name.
func (c *rawCodec) UnmarshalJSON(b []byte) error {
	var name string
	if json.Unmarshal(b, &name) == nil {
		c.Name = name
		return nil
	}
	type plain rawCodec
	return json.Unmarshal(b, (*plain)(c))
}

type v3Array struct {
	ZarrFormat *int            `json:"zarr_format"`
	NodeType   string          `json:"node_type"`
	Shape      []int64         `json:"shape"`
	DataType   json.RawMessage `json:"data_type"`
	ChunkGrid  struct {
		Name          string `json:"name"`
		Configuration struct {
			ChunkShape []int64 `json:"chunk_shape"`
		} `json:"configuration"`
	} `json:"chunk_grid"`
	ChunkKeyEncoding struct {
		Name          string `json:"name"`
		Configuration struct {
			Separator string `json:"separator"`
		} `json:"configuration"`
	} `json:"chunk_key_encoding"`
	FillValue           json.RawMessage            `json:"fill_value"`
	Codecs              []rawCodec                 `json:"codecs"`
	Attributes          map[string]json.RawMessage `json:"attributes"`
	DimensionNames      []*string                  `json:"dimension_names"`
	StorageTransformers []json.RawMessage          `json:"storage_transformers"`
}

// checkShape checks an array's shape against the bounds of nd.
func checkShape(key string, shape64 []int64) ([]int, error) {
	if len(shape64) > maxRank {
		return nil, formatErrorf(key, nil, "%d axes, more than %d", len(shape64), maxRank)
	}
	shape := make([]int, len(shape64))
	for i, s := range shape64 {
		if s < 0 || s > nd.MaxShapeElements {
			return nil, formatErrorf(key, nil, "shape %v: axis %d has length %d", shape64, i, s)
		}
		shape[i] = int(s)
	}
	if _, err := nd.ShapeElements(shape); err != nil {
		return nil, formatErrorf(key, err, "shape %v", shape64)
	}
	return shape, nil
}

// checkChunk checks a chunk (or shard) shape of an array of rank and
// element size: positive lengths whose chunk fits MaxChunkBytes.
func checkChunk(key, what string, c64 []int64, rank, esize int) ([]int, error) {
	if len(c64) != rank {
		return nil, formatErrorf(key, nil, "%s %v has %d axes; the shape has %d", what, c64, len(c64), rank)
	}
	c := make([]int, rank)
	n := int64(esize)
	for i, s := range c64 {
		if s < 1 || s > MaxChunkBytes {
			return nil, formatErrorf(key, nil, "%s %v: axis %d has length %d", what, c64, i, s)
		}
		c[i] = int(s)
		if n *= s; n > MaxChunkBytes {
			return nil, formatErrorf(key, nil, "%s %v holds more than %d bytes", what, c64, int64(MaxChunkBytes))
		}
	}
	return c, nil
}

// parseV3 reads a v3 array's zarr.json (key names it in errors).
func parseV3(key string, b []byte) (*parsed, error) {
	var m v3Array
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, formatErrorf(key, err, "not the JSON of Zarr v3 metadata")
	}
	if m.ZarrFormat == nil || *m.ZarrFormat != 3 {
		return nil, formatErrorf(key, nil, "zarr_format is not 3")
	}
	if m.NodeType != "array" {
		return nil, formatErrorf(key, nil, "node_type %q is not an array", m.NodeType)
	}
	if len(m.StorageTransformers) > 0 {
		return nil, &UnsupportedError{Key: key, What: "storage_transformers", Value: string(m.StorageTransformers[0])}
	}
	p := &parsed{}
	p.Format = 3
	var err error
	if p.Shape, err = checkShape(key, m.Shape); err != nil {
		return nil, err
	}
	var dtName string
	if json.Unmarshal(m.DataType, &dtName) != nil {
		return nil, &UnsupportedError{Key: key, What: "data_type", Value: string(m.DataType), Supported: v3DataTypeNames}
	}
	dt, ok := v3DataTypes[dtName]
	if !ok {
		return nil, &UnsupportedError{Key: key, What: "data_type", Value: dtName, Supported: v3DataTypeNames}
	}
	p.DType = dt
	if m.ChunkGrid.Name != "regular" {
		return nil, &UnsupportedError{Key: key, What: "chunk_grid", Value: m.ChunkGrid.Name, Supported: "regular"}
	}
	if p.grid, err = checkChunk(key, "chunk_shape", m.ChunkGrid.Configuration.ChunkShape, len(p.Shape), dt.Size()); err != nil {
		return nil, err
	}
	sep := m.ChunkKeyEncoding.Configuration.Separator
	switch m.ChunkKeyEncoding.Name {
	case "default":
		if sep == "" {
			sep = "/"
		}
	case "v2":
		if sep == "" {
			sep = "."
		}
	default:
		return nil, &UnsupportedError{Key: key, What: "chunk_key_encoding", Value: m.ChunkKeyEncoding.Name, Supported: "default, v2"}
	}
	if sep != "/" && sep != "." {
		return nil, &UnsupportedError{Key: key, What: "chunk key separator", Value: sep, Supported: `"/", "."`}
	}
	p.Separator = sep
	p.key = chunkKey(m.ChunkKeyEncoding.Name == "default", sep)
	if p.fill, err = parseFill(key, dt, m.FillValue); err != nil {
		return nil, err
	}
	p.FillValue = fillFloat(dt, p.fill)
	if p.outer, err = parseChain(key, m.Codecs, p.grid, dt); err != nil {
		return nil, err
	}
	if s := p.outer.shard; s != nil {
		p.ShardShape, p.ChunkShape = p.grid, s.inner
		p.describe(s.codecs)
	} else {
		p.ChunkShape = p.grid
		p.describe(p.outer)
	}
	p.Attributes = m.Attributes
	if m.DimensionNames != nil {
		if len(m.DimensionNames) != len(p.Shape) {
			return nil, formatErrorf(key, nil, "%d dimension_names for %d axes", len(m.DimensionNames), len(p.Shape))
		}
		p.DimensionNames = make([]string, len(p.Shape))
		for i, n := range m.DimensionNames {
			if n != nil {
				p.DimensionNames[i] = *n
			}
		}
	}
	return p, nil
}

// describe fills Meta's codec fields from the chain of a chunk.
func (p *parsed) describe(c chain) {
	p.BigEndian = c.big
	p.FortranOrder = len(c.perm) > 1 && slices.Equal(c.perm, reversed(len(c.perm)))
	for _, b := range c.bytes {
		switch b := b.(type) {
		case crc32cCodec:
			p.Checksum = true
		case gzipCodec:
			p.Compressor = cmp(p.Compressor, Compressor{Name: "gzip", Level: b.level})
		case zlibCodec:
			p.Compressor = cmp(p.Compressor, Compressor{Name: "zlib", Level: b.level})
		case zstdCodec:
			p.Compressor = cmp(p.Compressor, Compressor{Name: "zstd", Level: b.level})
		case bloscCodec:
			p.Compressor = cmp(p.Compressor, Compressor{Name: "blosc", Level: b.clevel, BloscName: b.cname,
				Shuffle: b.shuffle, BloscNoShuffle: b.shuffle == NoShuffle})
		}
	}
}

// cmp keeps the first compressor found.
func cmp(have, found Compressor) Compressor {
	if have.Name != "" {
		return have
	}
	return found
}

func reversed(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = n - 1 - i
	}
	return p
}

// chunkKey returns the key of a chunk index under v3's "default" encoding
// ("c/1/2") or v2's ("1.2"; "0" for an array of no axes).
func chunkKey(prefixed bool, sep string) func([]int) string {
	return func(idx []int) string {
		var b strings.Builder
		if prefixed {
			b.WriteString("c")
		}
		for i, v := range idx {
			if i > 0 || prefixed {
				b.WriteString(sep)
			}
			b.WriteString(strconv.Itoa(v))
		}
		if b.Len() == 0 {
			return "0"
		}
		return b.String()
	}
}

// parseChain reads a v3 codec list for chunks of shape and type dt.
func parseChain(key string, codecs []rawCodec, shape []int, dt nd.DType) (chain, error) {
	var c chain
	stage := 0 // 0: array-to-array, 1: bytes-to-bytes (after the array-to-bytes codec)
	for _, rc := range codecs {
		cfg := rc.Configuration
		if len(cfg) == 0 || string(cfg) == "null" {
			cfg = json.RawMessage("{}")
		}
		bad := func(err error) error {
			return formatErrorf(key, err, "codec %s configuration %s", rc.Name, cfg)
		}
		switch rc.Name {
		case "transpose":
			if stage != 0 {
				return c, formatErrorf(key, nil, "transpose after the array-to-bytes codec")
			}
			var t struct {
				Order json.RawMessage `json:"order"`
			}
			if err := json.Unmarshal(cfg, &t); err != nil {
				return c, bad(err)
			}
			var perm []int
			var order string
			switch {
			case json.Unmarshal(t.Order, &perm) == nil:
			case json.Unmarshal(t.Order, &order) == nil && (order == "C" || order == "F"):
				// The draft spec's names for the identity and the reversal.
				perm = make([]int, len(shape))
				for i := range perm {
					perm[i] = i
				}
				if order == "F" {
					perm = reversed(len(shape))
				}
			default:
				return c, bad(nil)
			}
			if !isPerm(perm, len(shape)) {
				return c, formatErrorf(key, nil, "transpose order %v is not a permutation of %d axes", perm, len(shape))
			}
			c.perm = composePerm(c.perm, perm)
		case "bytes", "endian":
			if stage != 0 {
				return c, formatErrorf(key, nil, "a second array-to-bytes codec (%s)", rc.Name)
			}
			var e struct {
				Endian string `json:"endian"`
			}
			if err := json.Unmarshal(cfg, &e); err != nil {
				return c, bad(err)
			}
			switch e.Endian {
			case "little", "":
			case "big":
				c.big = dt.Size() > 1
			default:
				return c, bad(nil)
			}
			stage = 1
		case "sharding_indexed":
			if stage != 0 {
				return c, formatErrorf(key, nil, "a second array-to-bytes codec (%s)", rc.Name)
			}
			if c.perm != nil {
				return c, &UnsupportedError{Key: key, What: "codec order", Value: "transpose before sharding_indexed"}
			}
			s, err := parseShard(key, cfg, shape, dt)
			if err != nil {
				return c, err
			}
			c.shard = s
			stage = 1
		default:
			if stage != 1 {
				return c, formatErrorf(key, nil, "codec %s before the array-to-bytes codec (bytes or sharding_indexed)", rc.Name)
			}
			bc, err := parseBytesCodec(key, rc.Name, cfg, dt)
			if err != nil {
				return c, err
			}
			c.bytes = append(c.bytes, bc)
		}
	}
	if stage == 0 {
		return c, formatErrorf(key, nil, "no array-to-bytes codec (bytes or sharding_indexed)")
	}
	return c, nil
}

func isPerm(p []int, n int) bool {
	if len(p) != n {
		return false
	}
	seen := make([]bool, n)
	for _, v := range p {
		if v < 0 || v >= n || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

// composePerm is the transpose by a then by b.
func composePerm(a, b []int) []int {
	if a == nil {
		return b
	}
	out := make([]int, len(b))
	for i := range b {
		out[i] = a[b[i]]
	}
	return out
}

func parseShard(key string, cfg json.RawMessage, shape []int, dt nd.DType) (*shardCodec, error) {
	var s struct {
		ChunkShape    []int64    `json:"chunk_shape"`
		Codecs        []rawCodec `json:"codecs"`
		IndexCodecs   []rawCodec `json:"index_codecs"`
		IndexLocation string     `json:"index_location"`
	}
	if err := json.Unmarshal(cfg, &s); err != nil {
		return nil, formatErrorf(key, err, "sharding_indexed configuration")
	}
	inner, err := checkChunk(key, "sharding chunk_shape", s.ChunkShape, len(shape), dt.Size())
	if err != nil {
		return nil, err
	}
	for i := range shape {
		if shape[i]%inner[i] != 0 {
			return nil, formatErrorf(key, nil, "shard shape %v is not a whole number of chunks %v", shape, inner)
		}
	}
	sc := &shardCodec{inner: inner}
	if sc.codecs, err = parseChain(key, s.Codecs, inner, dt); err != nil {
		return nil, err
	}
	nchunks := 1
	for i := range shape {
		nchunks *= shape[i] / inner[i]
	}
	if nchunks > MaxChunkBytes/16 {
		return nil, formatErrorf(key, nil, "%d chunks in a shard", nchunks)
	}
	if s.IndexCodecs == nil {
		s.IndexCodecs = []rawCodec{{Name: "bytes", Configuration: json.RawMessage(`{"endian":"little"}`)}, {Name: "crc32c"}}
	}
	if sc.index, err = parseChain(key, s.IndexCodecs, []int{nchunks, 2}, nd.Uint64); err != nil {
		return nil, err
	}
	if sc.index.shard != nil || sc.index.perm != nil {
		return nil, &UnsupportedError{Key: key, What: "index_codecs", Value: "a transpose or sharding"}
	}
	for _, b := range sc.index.bytes {
		if _, ok := b.(crc32cCodec); !ok {
			return nil, &UnsupportedError{Key: key, What: "index codec", Value: b.v3().Name, Supported: "bytes, crc32c"}
		}
	}
	switch s.IndexLocation {
	case "", "end":
	case "start":
		sc.indexAtStart = true
	default:
		return nil, formatErrorf(key, nil, "index_location %q", s.IndexLocation)
	}
	return sc, nil
}

func parseBytesCodec(key, name string, cfg json.RawMessage, dt nd.DType) (bytesCodec, error) {
	bad := func(err error) error { return formatErrorf(key, err, "codec %s configuration %s", name, cfg) }
	var level struct {
		Level    *int  `json:"level"`
		Checksum *bool `json:"checksum"`
	}
	switch name {
	case "gzip", "zlib", "zstd":
		if err := json.Unmarshal(cfg, &level); err != nil {
			return nil, bad(err)
		}
		lv := 0
		if level.Level != nil {
			lv = *level.Level
		}
		switch name {
		case "gzip":
			return gzipCodec{level: lv}, nil
		case "zlib":
			return zlibCodec{level: lv}, nil
		}
		return zstdCodec{level: lv, checksum: level.Checksum != nil && *level.Checksum}, nil
	case "crc32c":
		return crc32cCodec{}, nil
	case "blosc":
		var b struct {
			CName     string          `json:"cname"`
			CLevel    int             `json:"clevel"`
			Shuffle   json.RawMessage `json:"shuffle"`
			TypeSize  int             `json:"typesize"`
			BlockSize int             `json:"blocksize"`
		}
		if err := json.Unmarshal(cfg, &b); err != nil {
			return nil, bad(err)
		}
		sh, err := parseShuffle(b.Shuffle, dt)
		if err != nil {
			return nil, bad(err)
		}
		if b.TypeSize <= 0 {
			b.TypeSize = dt.Size()
		}
		return bloscCodec{cname: b.CName, clevel: b.CLevel, shuffle: sh, typesize: b.TypeSize, blocksize: b.BlockSize}, nil
	}
	return nil, &UnsupportedError{Key: key, What: "codec", Value: name,
		Supported: "transpose, bytes, sharding_indexed, gzip, zlib, zstd, blosc, crc32c"}
}

// parseShuffle reads blosc's shuffle as v3 names it ("shuffle") or as
// numcodecs does (1; -1 is numcodecs' automatic choice: bit shuffle for
// one-byte elements, byte shuffle for others).
func parseShuffle(raw json.RawMessage, dt nd.DType) (Shuffle, error) {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		for s, n := range shuffleNames {
			if n == name {
				return s, nil
			}
		}
		return 0, fmt.Errorf("shuffle %q", name)
	}
	var n int
	if len(raw) == 0 {
		return ByteShuffle, nil
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, err
	}
	switch {
	case n == -1 && dt.Size() == 1:
		return BitShuffle, nil
	case n == -1:
		return ByteShuffle, nil
	case n >= 0 && n <= 2:
		return Shuffle(n), nil
	}
	return 0, fmt.Errorf("shuffle %d", n)
}

type v2Array struct {
	ZarrFormat         *int                       `json:"zarr_format"`
	Shape              []int64                    `json:"shape"`
	Chunks             []int64                    `json:"chunks"`
	DType              json.RawMessage            `json:"dtype"`
	Compressor         map[string]json.RawMessage `json:"compressor"`
	FillValue          json.RawMessage            `json:"fill_value"`
	Order              string                     `json:"order"`
	Filters            []json.RawMessage          `json:"filters"`
	DimensionSeparator string                     `json:"dimension_separator"`
}

// parseV2 reads a v2 array's .zarray.
func parseV2(key string, b []byte) (*parsed, error) {
	var m v2Array
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, formatErrorf(key, err, "not the JSON of Zarr v2 metadata")
	}
	if m.ZarrFormat == nil || *m.ZarrFormat != 2 {
		return nil, formatErrorf(key, nil, "zarr_format is not 2")
	}
	p := &parsed{}
	p.Format = 2
	var err error
	if p.Shape, err = checkShape(key, m.Shape); err != nil {
		return nil, err
	}
	var dts string
	if json.Unmarshal(m.DType, &dts) != nil {
		return nil, &UnsupportedError{Key: key, What: "dtype", Value: string(m.DType), Supported: "a NumPy type string such as <f4"}
	}
	dt, big, err := parseV2DType(key, dts)
	if err != nil {
		return nil, err
	}
	p.DType = dt
	if p.grid, err = checkChunk(key, "chunks", m.Chunks, len(p.Shape), dt.Size()); err != nil {
		return nil, err
	}
	p.ChunkShape = p.grid
	if len(m.Filters) > 0 {
		return nil, &UnsupportedError{Key: key, What: "filters", Value: string(m.Filters[0]), Supported: "null"}
	}
	switch m.Order {
	case "C":
	case "F":
		if len(p.Shape) > 1 {
			p.outer.perm = reversed(len(p.Shape))
		}
	default:
		return nil, formatErrorf(key, nil, "order %q is neither C nor F", m.Order)
	}
	p.outer.big = big
	if m.Compressor != nil {
		var id string
		if err := json.Unmarshal(m.Compressor["id"], &id); err != nil {
			return nil, formatErrorf(key, err, "compressor without an id")
		}
		cfg, _ := json.Marshal(m.Compressor)
		bc, err := parseBytesCodec(key, id, cfg, dt)
		if err != nil {
			return nil, err
		}
		if _, ok := bc.(crc32cCodec); ok {
			return nil, &UnsupportedError{Key: key, What: "compressor", Value: id}
		}
		p.outer.bytes = []bytesCodec{bc}
	}
	switch m.DimensionSeparator {
	case "", ".":
		p.Separator = "."
	case "/":
		p.Separator = "/"
	default:
		return nil, &UnsupportedError{Key: key, What: "dimension_separator", Value: m.DimensionSeparator, Supported: `".", "/"`}
	}
	p.key = chunkKey(false, p.Separator)
	if p.fill, err = parseFill(key, dt, m.FillValue); err != nil {
		return nil, err
	}
	p.FillValue = fillFloat(dt, p.fill)
	p.describe(p.outer)
	return p, nil
}

// normalize checks m for Create and fills in its defaults.
func (m Meta) normalize() (Meta, error) {
	m.Shape = slices.Clone(m.Shape)
	m.ChunkShape = slices.Clone(m.ChunkShape)
	m.ShardShape = slices.Clone(m.ShardShape)
	if m.Format == 0 {
		m.Format = 3
	}
	if m.Format != 2 && m.Format != 3 {
		return m, argErrorf("meta", "Format %d is neither 2 nor 3", m.Format)
	}
	if !m.DType.Valid() {
		return m, argErrorf("meta", "DType %v", m.DType)
	}
	shape64 := make([]int64, len(m.Shape))
	for i, s := range m.Shape {
		shape64[i] = int64(s)
	}
	if _, err := checkShape("meta", shape64); err != nil {
		return m, argErrorf("meta", "%v", err)
	}
	if m.ChunkShape == nil {
		m.ChunkShape = DefaultChunkShape(m.Shape, m.DType)
	}
	c64 := make([]int64, len(m.ChunkShape))
	for i, s := range m.ChunkShape {
		c64[i] = int64(s)
	}
	if _, err := checkChunk("meta", "ChunkShape", c64, len(m.Shape), m.DType.Size()); err != nil {
		return m, argErrorf("meta", "%v", err)
	}
	if m.ShardShape != nil {
		if m.Format == 2 {
			return m, argErrorf("meta", "Zarr v2 has no shards (ShardShape %v)", m.ShardShape)
		}
		s64 := make([]int64, len(m.ShardShape))
		for i, s := range m.ShardShape {
			s64[i] = int64(s)
			if s > 0 && s%m.ChunkShape[i] != 0 {
				return m, argErrorf("meta", "ShardShape %v is not a whole number of chunks %v", m.ShardShape, m.ChunkShape)
			}
		}
		if _, err := checkChunk("meta", "ShardShape", s64, len(m.Shape), m.DType.Size()); err != nil {
			return m, argErrorf("meta", "%v", err)
		}
	}
	if m.Format == 2 && m.Checksum {
		return m, argErrorf("meta", "Zarr v2 has no crc32c codec")
	}
	switch m.Separator {
	case "":
		m.Separator = map[int]string{2: ".", 3: "/"}[m.Format]
	case "/", ".":
	default:
		return m, argErrorf("meta", "Separator %q is neither / nor .", m.Separator)
	}
	if m.DimensionNames != nil && len(m.DimensionNames) != len(m.Shape) {
		return m, argErrorf("meta", "%d DimensionNames for %d axes", len(m.DimensionNames), len(m.Shape))
	}
	if m.DType.Size() == 1 {
		m.BigEndian = false
	}
	if len(m.Shape) < 2 {
		m.FortranOrder = false
	}
	return m, nil
}

// DefaultChunkShape is the chunk Create uses when Meta gives none: about
// 1 MiB, the same length on every axis that is long enough.
func DefaultChunkShape(shape []int, dt nd.DType) []int {
	c := make([]int, len(shape))
	for i := range c {
		c[i] = 1
	}
	budget := (1 << 20) / max(1, dt.Size())
	// Double every axis in turn, fastest first, while the chunk fits: once
	// no axis grows, none will.
	for edge := 2; ; edge *= 2 {
		grew := false
		for i := len(shape) - 1; i >= 0; i-- {
			want := max(1, min(edge, shape[i]))
			if want <= c[i] {
				continue
			}
			n := want
			for j := range c {
				if j != i {
					n *= c[j]
				}
			}
			if n <= budget {
				c[i], grew = want, true
			}
		}
		if !grew {
			return c
		}
	}
}

// bytesCodecs is the compressor (and checksum) of m as codecs.
func (m Meta) bytesCodecs() ([]bytesCodec, error) {
	var out []bytesCodec
	c := m.Compressor
	switch c.Name {
	case "":
	case "gzip":
		out = append(out, gzipCodec{level: defaultLevel(c.Level, 6)})
	case "zlib":
		out = append(out, zlibCodec{level: defaultLevel(c.Level, 6)})
	case "zstd":
		out = append(out, zstdCodec{level: defaultLevel(c.Level, 3)})
	case "blosc":
		b := bloscCodec{cname: c.BloscName, clevel: defaultLevel(c.Level, 5), shuffle: c.Shuffle, typesize: m.DType.Size()}
		if b.cname == "" {
			b.cname = "lz4"
		}
		switch b.cname {
		case "lz4", "lz4hc", "zstd", "zlib":
		default:
			return nil, argErrorf("meta", "blosc compressor %q is not one that is written (lz4, lz4hc, zstd, zlib)", b.cname)
		}
		if b.shuffle == NoShuffle && !c.BloscNoShuffle {
			b.shuffle = ByteShuffle
		}
		if b.shuffle < NoShuffle || b.shuffle > BitShuffle {
			return nil, argErrorf("meta", "blosc shuffle %d", b.shuffle)
		}
		out = append(out, b)
	default:
		return nil, argErrorf("meta", "compressor %q is not one that is written (zstd, gzip, zlib, blosc or none)", c.Name)
	}
	if m.Checksum {
		out = append(out, crc32cCodec{})
	}
	return out, nil
}

func defaultLevel(l, def int) int {
	if l == 0 {
		return def
	}
	return l
}

// encodeMeta returns the metadata documents of a normalized m: the key
// (relative to the array) and its JSON.
func (m Meta) encodeMeta() (map[string][]byte, error) {
	bc, err := m.bytesCodecs()
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	if m.Format == 2 {
		var comp any
		if len(bc) > 0 {
			comp = bc[0].v2()
		}
		order := "C"
		if m.FortranOrder {
			order = "F"
		}
		doc := map[string]any{"zarr_format": 2, "shape": nonNil(m.Shape), "chunks": nonNil(m.ChunkShape),
			"dtype": v2DType(m.DType, m.BigEndian), "compressor": comp, "fill_value": fillJSON(m.DType, m.FillValue),
			"order": order, "filters": nil, "dimension_separator": m.Separator}
		if out[".zarray"], err = marshal(doc); err != nil {
			return nil, err
		}
		if len(m.Attributes) > 0 {
			if out[".zattrs"], err = marshal(m.Attributes); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	endian := "little"
	if m.BigEndian {
		endian = "big"
	}
	inner := []any{}
	if m.FortranOrder {
		inner = append(inner, codecJSON{Name: "transpose", Configuration: map[string]any{"order": reversed(len(m.Shape))}})
	}
	inner = append(inner, codecJSON{Name: "bytes", Configuration: map[string]any{"endian": endian}})
	for _, c := range bc {
		inner = append(inner, c.v3())
	}
	codecs, grid := inner, m.ChunkShape
	if m.ShardShape != nil {
		grid = m.ShardShape
		codecs = []any{codecJSON{Name: "sharding_indexed", Configuration: map[string]any{
			"chunk_shape": nonNil(m.ChunkShape), "codecs": inner,
			"index_codecs":   []any{codecJSON{Name: "bytes", Configuration: map[string]any{"endian": "little"}}, codecJSON{Name: "crc32c"}},
			"index_location": "end"}}}
	}
	doc := map[string]any{"zarr_format": 3, "node_type": "array", "shape": nonNil(m.Shape), "data_type": m.DType.String(),
		"chunk_grid":         map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": nonNil(grid)}},
		"chunk_key_encoding": map[string]any{"name": "default", "configuration": map[string]any{"separator": m.Separator}},
		"fill_value":         fillJSON(m.DType, m.FillValue), "codecs": codecs, "attributes": nonNilMap(m.Attributes)}
	if m.DimensionNames != nil {
		doc["dimension_names"] = m.DimensionNames
	}
	out["zarr.json"], err = marshal(doc)
	return out, err
}

func nonNil(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

func nonNilMap(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return map[string]json.RawMessage{}
	}
	return m
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
