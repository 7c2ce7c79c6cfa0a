package jpeg

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestEncodeFixtures: Encode writes cv2.imencode's bytes for every
// fixture cv2 wrote without restart intervals (gray and RGB 4:2:0, sizes
// 1×1 to 120×97, qualities 1 to 100), and PIL's for its 4:4:4 and 4:2:2
// files (the same libjpeg, whose defaults PIL keeps).
func TestEncodeFixtures(t *testing.T) {
	n := 0
	for _, fx := range fixtures(t) {
		if fx.writer != "cv2" && fx.writer != "pil" || fx.restart != 0 {
			continue
		}
		src := readPNG(t, filepath.Join("testdata", fx.name+".src.png"))
		want, err := os.ReadFile(filepath.Join("testdata", fx.name+".jpg"))
		if err != nil {
			t.Fatal(err)
		}
		opt := &Options{Quality: fx.quality}
		switch fx.sampling {
		case "444":
			opt.Sampling = Sampling444
		case "422":
			opt.Sampling = Sampling422
		}
		got, err := AppendEncode(nil, src, opt)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if !bytes.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s: %d bytes, want %d; first difference at %d", fx.name, len(got), len(want), i)
		}
	}
	t.Logf("%d files compared", n)
}
