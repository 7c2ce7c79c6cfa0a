package cuda

import (
	"bytes"
	"os"
	"testing"
)

// FuzzDecodeCacheFile feeds damaged cache files to the decoder (the
// gpucache.Store that moduleStore is), which must reject them without
// panicking or allocating, and accept only files that re-encode to
// themselves. Seeded from the oracle's sample file
// (testdata/sample_cache_file.bin) and its truncations.
func FuzzDecodeCacheFile(f *testing.F) {
	sample, err := os.ReadFile("testdata/sample_cache_file.bin")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample)
	f.Add(sample[:moduleStore.HeaderSize()])
	f.Add(sample[:len(sample)/2])
	f.Add([]byte(moduleStore.Magic))
	key := oracleKey(f, 0)
	f.Fuzz(func(t *testing.T, data []byte) {
		image, err := moduleStore.Decode(key, data)
		if err != nil {
			return
		}
		if !bytes.Equal(moduleStore.Encode(key, image), data) {
			t.Errorf("accepted a file that does not re-encode to itself")
		}
	})
}
