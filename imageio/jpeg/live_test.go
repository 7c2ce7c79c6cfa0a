package jpeg

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// liveScript runs OpenCV on the cases TestOpenCVLive writes: for each
// line "name h w c q", it encodes name.raw (RGB or gray samples) at
// quality q to name.cv.jpg, and decodes name.cv.jpg and every
// name.*.ours.jpg to .dec raw samples (BGR turned to RGB).
const liveScript = `
import glob, os, sys
import cv2, numpy as np
d = sys.argv[1]
def rgb(a):
    return a if a.ndim == 2 else np.ascontiguousarray(a[..., ::-1])
for line in open(os.path.join(d, "cases.txt")):
    name, h, w, c, q = line.split()
    h, w, c, q = int(h), int(w), int(c), int(q)
    a = np.fromfile(os.path.join(d, name + ".raw"), np.uint8).reshape((h, w) if c == 1 else (h, w, c))
    ok, b = cv2.imencode(".jpg", rgb(a), [cv2.IMWRITE_JPEG_QUALITY, q])
    b.tofile(os.path.join(d, name + ".cv.jpg"))
    for f in [name + ".cv.jpg"] + [os.path.basename(p) for p in glob.glob(os.path.join(d, name + ".*.ours.jpg"))]:
        x = cv2.imdecode(np.fromfile(os.path.join(d, f), np.uint8), cv2.IMREAD_UNCHANGED)
        rgb(x).tofile(os.path.join(d, f[:-4] + ".dec"))
`

// TestOpenCVLive compares with OpenCV on random images when
// /usr/bin/python3 has cv2 (it is skipped otherwise): Encode writes
// cv2.imencode's bytes; Decode gives cv2.imdecode's samples of cv2's
// files and of ours in every sampling.
func TestOpenCVLive(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import cv2, numpy").Run(); err != nil {
		t.Skip("no /usr/bin/python3 with cv2:", err)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 7))
	type tcase struct {
		name string
		img  *Image
		q    int
	}
	var cases []tcase
	var list strings.Builder
	samplings := []Sampling{Sampling444, Sampling422, Sampling440}
	for n := range 60 {
		h, w, c := 1+rng.IntN(70), 1+rng.IntN(70), 1+2*rng.IntN(2)
		img := &Image{Width: w, Height: h, Channels: c, Pix: make([]byte, h*w*c)}
		smooth := rng.IntN(2) == 0
		for i := range img.Pix {
			if smooth {
				img.Pix[i] = byte(i/c%w + i/(c*w) + 40*(i%c) + rng.IntN(9))
			} else {
				img.Pix[i] = byte(rng.IntN(256))
			}
		}
		q := 1 + rng.IntN(100)
		tc := tcase{fmt.Sprintf("case%d", n), img, q}
		cases = append(cases, tc)
		if err := os.WriteFile(filepath.Join(dir, tc.name+".raw"), img.Pix, 0o644); err != nil {
			t.Fatal(err)
		}
		if c == 3 {
			for _, s := range samplings {
				b, err := AppendEncode(nil, img, &Options{Quality: q, Sampling: s})
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s.s%d.ours.jpg", tc.name, s)), b, 0o644)
			}
		}
		fmt.Fprintf(&list, "%s %d %d %d %d\n", tc.name, h, w, c, q)
	}
	os.WriteFile(filepath.Join(dir, "cases.txt"), []byte(list.String()), 0o644)
	if out, err := exec.Command("/usr/bin/python3", "-c", liveScript, dir).CombinedOutput(); err != nil {
		t.Fatalf("cv2: %v\n%s", err, out)
	}
	decodeSame := func(jpgPath, decPath string, like *Image) {
		data, err := os.ReadFile(jpgPath)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(decPath)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(data)
		if err != nil {
			t.Errorf("%s: %v", jpgPath, err)
			return
		}
		if err := sameImage(got, &Image{Width: like.Width, Height: like.Height, Channels: like.Channels, Pix: want}); err != nil {
			t.Errorf("%s: %v", filepath.Base(jpgPath), err)
		}
	}
	for _, tc := range cases {
		want, err := os.ReadFile(filepath.Join(dir, tc.name+".cv.jpg"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendEncode(nil, tc.img, &Options{Quality: tc.q})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s (%dx%dx%d q%d): encoded %d bytes, cv2 %d, or other bytes", tc.name, tc.img.Width, tc.img.Height, tc.img.Channels, tc.q, len(got), len(want))
		}
		decodeSame(filepath.Join(dir, tc.name+".cv.jpg"), filepath.Join(dir, tc.name+".cv.dec"), tc.img)
		if tc.img.Channels == 3 {
			for _, s := range samplings {
				base := filepath.Join(dir, fmt.Sprintf("%s.s%d.ours", tc.name, s))
				decodeSame(base+".jpg", base+".dec", tc.img)
			}
		}
	}
}
