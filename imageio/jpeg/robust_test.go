package jpeg

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ndconv/ndconv/nd"
)

var update = flag.Bool("update", false, "rewrite testdata/ours_*.jpg (then run testdata/gen.py)")

func checkErr(t *testing.T, err error) {
	t.Helper()
	var fe *FormatError
	var ue *UnsupportedError
	if !errors.As(err, &fe) && !errors.As(err, &ue) {
		t.Fatalf("untyped error %v (%T)", err, err)
	}
}

// TestTruncated: every prefix of small files (gray, 4:2:0, restart
// intervals) is refused with a typed error, never a panic, and a file cut
// inside its scan with "truncated file".
func TestTruncated(t *testing.T) {
	for _, name := range []string{"cv2_rgb_17x33_noisy_q95", "cv2_gray_7x9_random_q50", "cv2_rst3_rgb_50x70"} {
		data, err := os.ReadFile(filepath.Join("testdata", name+".jpg"))
		if err != nil {
			t.Fatal(err)
		}
		sos := bytes.Index(data, []byte{0xff, 0xda})
		for n := range len(data) {
			_, err := Decode(data[:n])
			if err == nil {
				t.Fatalf("%s cut at %d of %d: decoded", name, n, len(data))
			}
			checkErr(t, err)
			if n > sos+20 && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("%s cut at %d (in the scan): %v", name, n, err)
			}
		}
	}
}

// TestCorrupt: files with bytes flipped anywhere give a typed error or an
// image of the header's size, never a panic.
func TestCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, name := range []string{"cv2_rgb_120x97_extreme_q100", "cv2_gray_48x64_smooth_q50", "cv2_rst1_rgb_50x70", "pil_422_31x45", "ours_440_37x29"} {
		good, err := os.ReadFile(filepath.Join("testdata", name+".jpg"))
		if err != nil {
			t.Fatal(err)
		}
		for range 3000 {
			data := bytes.Clone(good)
			for range 1 + rng.IntN(4) {
				data[rng.IntN(len(data))] ^= byte(1 + rng.IntN(255))
			}
			img, err := Decode(data)
			if err != nil {
				checkErr(t, err)
				continue
			}
			if len(img.Pix) != img.Width*img.Height*img.Channels {
				t.Fatalf("%dx%dx%d image with %d samples", img.Width, img.Height, img.Channels, len(img.Pix))
			}
		}
	}
}

// TestParallelSame: the same samples and bytes with GOMAXPROCS 1, 2 and
// 8, with and without restart intervals (parallel interval decoding, the
// pipeline, the serial path).
func TestParallelSame(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	img := benchImage(301, 203, 3)
	gray := benchImage(77, 500, 1)
	rst, err := os.ReadFile("testdata/cv2_rst3_rgb_50x70.jpg")
	if err != nil {
		t.Fatal(err)
	}
	var refEnc, refGray []byte
	var refDec, refRst *Image
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		enc, err := AppendEncode(nil, img, &Options{Quality: 90})
		if err != nil {
			t.Fatal(err)
		}
		genc, _ := AppendEncode(nil, gray, &Options{Quality: 75})
		dec, err := Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		dr, err := Decode(rst)
		if err != nil {
			t.Fatal(err)
		}
		if refEnc == nil {
			refEnc, refGray, refDec, refRst = enc, genc, dec, dr
			continue
		}
		if !bytes.Equal(enc, refEnc) || !bytes.Equal(genc, refGray) {
			t.Errorf("GOMAXPROCS %d: other bytes", procs)
		}
		if err := sameImage(dec, refDec); err != nil {
			t.Errorf("GOMAXPROCS %d: %v", procs, err)
		}
		if err := sameImage(dr, refRst); err != nil {
			t.Errorf("GOMAXPROCS %d, restarts: %v", procs, err)
		}
	}
}

// TestRoundTrip: decoding what Encode writes gives the image back within
// JPEG's loss, for every sampling and gray, odd sizes; quality 100 4:4:4
// comes back within a few levels.
func TestRoundTrip(t *testing.T) {
	for _, s := range []Sampling{Sampling420, Sampling444, Sampling422, Sampling440} {
		for _, c := range []int{1, 3} {
			for _, hw := range [][2]int{{1, 1}, {5, 3}, {17, 31}, {64, 64}, {100, 37}} {
				img := benchImage(hw[0], hw[1], c)
				data, err := AppendEncode(nil, img, &Options{Quality: 100, Sampling: s})
				if err != nil {
					t.Fatal(err)
				}
				got, err := Decode(data)
				if err != nil {
					t.Fatal(err)
				}
				if got.Width != img.Width || got.Height != img.Height || got.Channels != c {
					t.Fatalf("%v %v: %dx%dx%d", s, hw, got.Width, got.Height, got.Channels)
				}
				worst := 0
				for i := range got.Pix {
					worst = max(worst, int(got.Pix[i])-int(img.Pix[i]), int(img.Pix[i])-int(got.Pix[i]))
				}
				if limit := 6; (c == 1 || s == Sampling444) && worst > limit || worst > 40 {
					t.Errorf("sampling %d, %d channels, %v: off by %d", s, c, hw, worst)
				}
			}
		}
	}
}

// TestEncodeErrors: bad options and images are refused with an
// *UnsupportedError.
func TestEncodeErrors(t *testing.T) {
	good := &Image{Width: 2, Height: 2, Channels: 1, Pix: make([]byte, 4)}
	for _, tc := range []struct {
		img *Image
		opt *Options
	}{
		{good, &Options{Quality: 101}},
		{good, &Options{Quality: -1}},
		{good, &Options{Sampling: 9}},
		{&Image{Width: 2, Height: 2, Channels: 2, Pix: make([]byte, 8)}, nil},
		{&Image{Width: 0, Height: 2, Channels: 1}, nil},
		{&Image{Width: 70000, Height: 1, Channels: 1, Pix: make([]byte, 70000)}, nil},
		{&Image{Width: 2, Height: 2, Channels: 3, Pix: make([]byte, 11)}, nil},
	} {
		if _, err := AppendEncode(nil, tc.img, tc.opt); err == nil {
			t.Errorf("%+v %+v: no error", tc.img, tc.opt)
		} else {
			var ue *UnsupportedError
			if !errors.As(err, &ue) {
				t.Errorf("%v: not an UnsupportedError", err)
			}
		}
	}
}

// TestWriteOurs440 writes, with -update, the 4:4:0 files (a sampling no
// encoder here but ours writes) that testdata/gen.py then decodes with
// cv2 for TestDecodeFixtures; without, it checks they are still ours.
func TestWriteOurs440(t *testing.T) {
	for _, hw := range [][2]int{{37, 29}, {16, 8}, {3, 2}} {
		img := benchImage(hw[0], hw[1], 3)
		data, err := AppendEncode(nil, img, &Options{Quality: 80, Sampling: Sampling440})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "ours_440_"+itoa(hw[0])+"x"+itoa(hw[1])+".jpg")
		if *update {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(old, data) {
			t.Errorf("%s: the encoder writes other bytes now (rerun with -update and gen.py)", path)
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// FuzzDecode: no input makes Decode panic or return an untyped error;
// what it decodes has the samples its size says.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"cv2_rgb_17x33_noisy_q95", "cv2_gray_7x9_random_q50", "cv2_rst3_rgb_50x70", "pil_422_5x6", "ours_440_3x2", "edit_adobe_rgb"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".jpg"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := Decode(data)
		if err != nil {
			checkErr(t, err)
			return
		}
		if len(img.Pix) != img.Width*img.Height*img.Channels {
			t.Fatalf("%dx%dx%d image with %d samples", img.Width, img.Height, img.Channels, len(img.Pix))
		}
	})
}

// TestWorkerPanic: a panic on one of the codec's worker goroutines (a
// bug) comes back from Encode and Decode as an *nd.PanicError, with every
// goroutine stopped — not the end of the process, and not a wait for
// rows that will not come — on several cores and on one.
func TestWorkerPanic(t *testing.T) {
	defer func() { testHookRow = nil }()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(34, 1))
	img := &Image{Width: 96, Height: 160, Channels: 3, Pix: make([]byte, 96*160*3)}
	for i := range img.Pix {
		img.Pix[i] = byte(rng.IntN(256))
	}
	good, err := AppendEncode(nil, img, nil)
	if err != nil {
		t.Fatal(err)
	}
	within := func(what string, f func() error) {
		t.Helper()
		res := make(chan error, 1)
		go func() { res <- f() }()
		select {
		case err := <-res:
			var pe *nd.PanicError
			if !errors.As(err, &pe) {
				t.Errorf("%s: %v (%T), want an *nd.PanicError", what, err, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still waiting after 20 s", what)
		}
	}
	for _, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		for _, row := range []int{0, 3, 9} {
			testHookRow = func(i int) {
				if i == row {
					panic("injected")
				}
			}
			within(fmt.Sprintf("encode, %d cores, row %d", procs, row), func() error {
				_, err := AppendEncode(nil, img, nil)
				return err
			})
			within(fmt.Sprintf("decode, %d cores, row %d", procs, row), func() error {
				_, err := Decode(good)
				return err
			})
		}
	}
	testHookRow = nil
	if _, err := Decode(good); err != nil {
		t.Fatalf("after the panics: %v", err)
	}
}
