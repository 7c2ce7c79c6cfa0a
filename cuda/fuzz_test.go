package cuda

import (
	"bytes"
	"os"
	"testing"
)

// FuzzDecodeCacheFile feeds damaged cache files to the decoder, which must
// reject them without panicking or allocating, and accept only files that
// re-encode to themselves. Seeded from the oracle's sample file
// (testdata/sample_cache_file.bin) and its truncations.
func FuzzDecodeCacheFile(f *testing.F) {
	sample, err := os.ReadFile("testdata/sample_cache_file.bin")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample)
	f.Add(sample[:cacheHeaderSize])
	f.Add(sample[:len(sample)/2])
	f.Add([]byte(cacheMagic))
	key := oracleKey(f, 0)
	f.Fuzz(func(t *testing.T, data []byte) {
		image, err := decodeCacheFile(key, data)
		if err != nil {
			return
		}
		if !bytes.Equal(encodeCacheFile(key, image), data) {
			t.Errorf("accepted a file that does not re-encode to itself")
		}
	})
}
