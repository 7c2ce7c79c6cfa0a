package zarr

import (
	"encoding/binary"
	"runtime"
	"testing"
)

// TestCorruptHeadersAllocateLittle decodes a few bytes whose headers claim
// a gigabyte: each decoder refuses them having allocated far less.
func TestCorruptHeadersAllocateLittle(t *testing.T) {
	blosc := make([]byte, 32)
	blosc[0], blosc[1], blosc[3] = 2, 1, 1
	binary.LittleEndian.PutUint32(blosc[4:], 1<<30)
	binary.LittleEndian.PutUint32(blosc[8:], 1<<30)
	binary.LittleEndian.PutUint32(blosc[12:], 32)
	for _, c := range []struct {
		name  string
		codec bytesCodec
		data  []byte
	}{
		// A zstd frame of one segment whose content size is 1 GiB.
		{"zstd", zstdCodec{}, []byte{0x28, 0xb5, 0x2f, 0xfd, 0xa0, 0, 0, 0, 0x40, 0x19, 0, 0, 'a', 'b', 'c'}},
		{"blosc", bloscCodec{}, blosc},
		{"gzip", gzipCodec{}, []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0x40}},
	} {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		_, err := c.codec.decode(c.data, 4096)
		runtime.ReadMemStats(&m1)
		if err == nil {
			t.Errorf("%s: a corrupt header decoded", c.name)
		}
		if a := m1.TotalAlloc - m0.TotalAlloc; a > 1<<20 {
			t.Errorf("%s: %d bytes allocated to refuse %d bytes claiming 1 GiB", c.name, a, len(c.data))
		}
	}
	// Metadata naming a chunk of 2^40 elements fails before any read.
	_, err := parseV3("zarr.json", []byte(`{"zarr_format":3,"node_type":"array","shape":[1099511627776],"data_type":"uint8",
		"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[1099511627776]}},"chunk_key_encoding":{"name":"default"},
		"fill_value":0,"codecs":[{"name":"bytes"}]}`))
	if err == nil {
		t.Error("a chunk of 2^40 bytes was accepted")
	}
}
