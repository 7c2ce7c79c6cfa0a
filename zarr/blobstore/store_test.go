package blobstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ndconv/ndconv/internal/s3test"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
	"github.com/ndconv/ndconv/zarr/blobstore"
)

// layouts are the arrays the round trips write: v3 sharded (index at the
// end, as zarr-python writes it) and v2.
var layouts = []struct {
	name string
	meta zarr.Meta
}{
	{"v3 sharded zstd", zarr.Meta{Shape: []int{20, 24, 18}, DType: nd.Float32, ChunkShape: []int{4, 8, 6},
		ShardShape: []int{8, 16, 12}, Compressor: zarr.Compressor{Name: "zstd"}}},
	{"v2 gzip", zarr.Meta{Format: 2, Shape: []int{20, 24, 18}, DType: nd.Uint16, ChunkShape: []int{5, 7, 9},
		Compressor: zarr.Compressor{Name: "gzip"}}},
}

// randomArray is an array of m's shape and type, a tenth of it zeros (so
// that some chunks hold only the fill value and are not stored).
func randomArray(t *testing.T, m zarr.Meta, seed uint64) nd.Array {
	t.Helper()
	a, err := nd.New(m.DType, m.Shape...)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 7))
	b := a.Bytes()
	for i := range b {
		b[i] = byte(r.Uint32() >> 24 & 0x3f)
	}
	clear(b[:len(b)/10])
	return a
}

// write writes a as a new array at path of s.
func write(t *testing.T, ctx context.Context, s zarr.Store, path string, m zarr.Meta, a nd.Array) {
	t.Helper()
	arr, err := zarr.Create(ctx, s, path, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := arr.WriteRegion(ctx, make([]int, len(m.Shape)), a); err != nil {
		t.Fatal(err)
	}
}

// contents is every key of s with its value.
func contents(t *testing.T, ctx context.Context, s zarr.Store) map[string][]byte {
	t.Helper()
	keys, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, k := range keys {
		if m[k], err = s.Get(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func sameContents(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	if !slices.Equal(slices.Sorted(mapsKeys(got)), slices.Sorted(mapsKeys(want))) {
		t.Fatalf("%s: keys %v, want %v (the local store's)", what, slices.Sorted(mapsKeys(got)), slices.Sorted(mapsKeys(want)))
	}
	for k, v := range want {
		if !bytes.Equal(got[k], v) {
			t.Errorf("%s: %s differs from the local store's (%d bytes, want %d)", what, k, len(got[k]), len(v))
		}
	}
}

func mapsKeys(m map[string][]byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// readBack reads the array at path of s whole, and a region that cuts
// through shards and chunks, and checks both against a.
func readBack(t *testing.T, ctx context.Context, s zarr.Store, path string, a nd.Array) {
	t.Helper()
	arr, err := zarr.Open(ctx, s, path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := arr.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), a.Bytes()) {
		t.Fatalf("%s read back differs from what was written", path)
	}
	start, shape := []int{3, 5, 7}, []int{9, 13, 6}
	part, _ := nd.New(a.DType(), shape...)
	if err := arr.ReadRegion(ctx, start, shape, part); err != nil {
		t.Fatal(err)
	}
	local := zarr.NewDirStore(t.TempDir())
	write(t, ctx, local, "x", arr.Meta(), a)
	la, _ := zarr.Open(ctx, local, "x")
	want, _ := nd.New(a.DType(), shape...)
	if err := la.ReadRegion(ctx, start, shape, want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(part.Bytes(), want.Bytes()) {
		t.Fatalf("%s: region %v+%v differs from the local store's", path, start, shape)
	}
}

// fastRetry retries quickly, so that tests of failing servers stay fast.
var fastRetry = &blobstore.Options{Retry: blobstore.Retry{Attempts: 8, Base: time.Millisecond, Max: 10 * time.Millisecond}}

// TestS3RoundTrip writes a sharded v3 array and a v2 array to the S3
// server and to a directory: the objects equal the files byte for byte,
// and read back equal.
func TestS3RoundTrip(t *testing.T) {
	srv := s3test.New(t)
	ctx := context.Background()
	for i, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			a := randomArray(t, l.meta, uint64(i))
			local := zarr.NewDirStore(t.TempDir())
			write(t, ctx, local, "g/arr", l.meta, a)
			s, err := blobstore.Open(ctx, srv.URL(fmt.Sprintf("data/t%d.zarr", i)), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			write(t, ctx, s, "g/arr", l.meta, a)
			sameContents(t, "s3", contents(t, ctx, s), contents(t, ctx, local))
			readBack(t, ctx, s, "g/arr", a)
			// The objects are where the URL said, under its path.
			log, _ := srv.Reset()
			if n := s3test.Count(log, "PUT data/t"+fmt.Sprint(i)+".zarr/g/arr/"); n == 0 {
				t.Errorf("no PUT under data/t%d.zarr/g/arr/ in %v", i, log)
			}
			// Remove deletes every object under the array.
			if err := zarr.Remove(ctx, s, "g"); err != nil {
				t.Fatal(err)
			}
			if ok, err := s.Exists(ctx, "g/"); err != nil || ok {
				t.Errorf("after Remove: objects left %v, %v", ok, err)
			}
		})
	}
}

// TestS3Failures: with 5% and then 20% of requests failing (500, 503,
// connections dropped before or after the request was served), writes
// and reads still give the local store's bytes.
func TestS3Failures(t *testing.T) {
	srv := s3test.New(t)
	ctx := context.Background()
	for _, rate := range []float64{0.05, 0.20} {
		for i, l := range layouts {
			t.Run(fmt.Sprintf("%.0f%% %s", rate*100, l.name), func(t *testing.T) {
				a := randomArray(t, l.meta, uint64(10+i))
				local := zarr.NewDirStore(t.TempDir())
				write(t, ctx, local, "arr", l.meta, a)
				s, err := blobstore.Open(ctx, srv.URL(fmt.Sprintf("fail%d/%d.zarr", int(rate*100), i)), fastRetry)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				srv.Reset()
				srv.Fail(rate, uint64(100*rate)+uint64(i))
				defer srv.Fail(0, 0)
				write(t, ctx, s, "arr", l.meta, a)
				readBack(t, ctx, s, "arr", a)
				got := contents(t, ctx, s)
				log, failed := srv.Reset()
				srv.Fail(0, 0)
				sameContents(t, "s3 failing", got, contents(t, ctx, local))
				if failed == 0 {
					t.Errorf("no request of %d failed: the test tests nothing", len(log))
				}
				t.Logf("%d requests, %d failed", len(log), failed)
			})
		}
	}
}

// TestS3RangedRead: a region inside one shard reads the array's metadata,
// the shard's index (one request, the last bytes) and the chunks the
// region meets (one request each), never the whole shard.
func TestS3RangedRead(t *testing.T) {
	srv := s3test.New(t)
	ctx := context.Background()
	m := zarr.Meta{Shape: []int{32, 32, 32}, DType: nd.Uint8, ChunkShape: []int{4, 4, 4},
		ShardShape: []int{16, 16, 16}, Compressor: zarr.Compressor{Name: "zstd"}}
	a := randomArray(t, m, 3)
	s, err := blobstore.Open(ctx, srv.URL("ranged.zarr"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write(t, ctx, s, "", m, a)
	arr, err := zarr.Open(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	// Elements 17..22 on each axis: chunks 4 and 5 of shard 1, 2³ = 8
	// chunks of the 64 in the shard.
	start, shape := []int{17, 17, 17}, []int{6, 6, 6}
	got, _ := nd.New(nd.Uint8, shape...)
	srv.Reset()
	if err := arr.ReadRegion(ctx, start, shape, got); err != nil {
		t.Fatal(err)
	}
	log, _ := srv.Reset()
	shard := "ranged.zarr/c/1/1/1"
	if n := s3test.Count(log, "GET "+shard+" bytes=-"); n != 1 {
		t.Errorf("%d reads of the shard's index (the last bytes), want 1: %v", n, log)
	}
	if n := s3test.Count(log, "GET "+shard+" bytes="); n != 1+8 {
		t.Errorf("%d ranged reads of the shard, want the index and 8 chunks: %v", n, log)
	}
	if n := s3test.Count(log, "GET "); n != 9 || len(log) != 9 {
		t.Errorf("%d requests (%d GETs), want 9: %v", len(log), n, log)
	}
	// The bytes are those of the array.
	for z := range 6 {
		for y := range 6 {
			for x := range 6 {
				if w := a.Bytes()[((17+z)*32+17+y)*32+17+x]; got.Bytes()[(z*6+y)*6+x] != w {
					t.Fatalf("element %v: %d, want %d", []int{17 + z, 17 + y, 17 + x}, got.Bytes()[(z*6+y)*6+x], w)
				}
			}
		}
	}
	// The 8 chunks are read at once: with each request taking 150 ms, the
	// index and then the chunks take about 300 ms, not 9 × 150.
	srv.Stall(150 * time.Millisecond)
	t0 := time.Now()
	err = arr.ReadRegion(ctx, start, shape, got)
	took := time.Since(t0)
	srv.Stall(0)
	srv.Reset()
	if err != nil {
		t.Fatal(err)
	}
	if took > 800*time.Millisecond {
		t.Errorf("a region of 8 chunks of one shard took %v at 150 ms a request: the chunks were not read in parallel", took)
	}
	// A region covering a shard reads it in one request.
	whole, _ := nd.New(nd.Uint8, 16, 16, 16)
	if err := arr.ReadRegion(ctx, []int{16, 0, 16}, []int{16, 16, 16}, whole); err != nil {
		t.Fatal(err)
	}
	log, _ = srv.Reset()
	if len(log) != 1 || log[0] != "GET ranged.zarr/c/1/0/1" {
		t.Errorf("a shard's whole region: requests %v, want one GET of it", log)
	}
}

// TestS3Cancel: a read from a server that stalls stops as soon as its
// context is cancelled, with the context's error.
func TestS3Cancel(t *testing.T) {
	srv := s3test.New(t)
	ctx := context.Background()
	m := layouts[0].meta
	a := randomArray(t, m, 4)
	s, err := blobstore.Open(ctx, srv.URL("cancel.zarr"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write(t, ctx, s, "", m, a)
	arr, err := zarr.Open(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	srv.Stall(10 * time.Second)
	defer srv.Stall(0)
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(100*time.Millisecond, cancel)
	t0 := time.Now()
	_, err = arr.ReadAll(cctx)
	took := time.Since(t0)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("read cancelled: err %v, want context.Canceled", err)
	}
	if took > 2*time.Second {
		t.Errorf("read cancelled after 100 ms returned after %v", took)
	}
	// A write stops too.
	cctx, cancel = context.WithCancel(ctx)
	time.AfterFunc(100*time.Millisecond, cancel)
	t0 = time.Now()
	err = arr.WriteRegion(cctx, make([]int, 3), a)
	if !errors.Is(err, context.Canceled) || time.Since(t0) > 2*time.Second {
		t.Errorf("write cancelled after 100 ms: %v after %v", err, time.Since(t0))
	}
}

// TestFileURL: a file:// store writes the same files as a DirStore.
func TestFileURL(t *testing.T) {
	ctx := context.Background()
	for i, l := range layouts {
		a := randomArray(t, l.meta, uint64(20+i))
		dir := t.TempDir()
		write(t, ctx, zarr.NewDirStore(filepath.Join(dir, "local.zarr")), "g/a", l.meta, a)
		s, err := blobstore.Open(ctx, "file://"+filepath.ToSlash(filepath.Join(dir, "remote.zarr")), nil)
		if err != nil {
			t.Fatal(err)
		}
		write(t, ctx, s, "g/a", l.meta, a)
		readBack(t, ctx, s, "g/a", a)
		s.Close()
		sameContents(t, "file://", contents(t, ctx, zarr.NewDirStore(filepath.Join(dir, "remote.zarr"))),
			contents(t, ctx, zarr.NewDirStore(filepath.Join(dir, "local.zarr"))))
		// Nothing else in the folder: no sidecar or temporary files.
		var extra []string
		filepath.WalkDir(filepath.Join(dir, "remote.zarr"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".attrs") || strings.HasSuffix(p, ".tmp")) {
				extra = append(extra, p)
			}
			return err
		})
		if len(extra) > 0 {
			t.Errorf("file:// left %v", extra)
		}
	}
}

// TestOpenErrors: URLs that name no bucket, or a scheme not served, fail
// with one clear error; keys outside the prefix are refused.
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{"s3:///x.zarr", "ftp://b/x.zarr", "file://host/x.zarr", "s3://u@b/x.zarr"} {
		if _, err := blobstore.Open(ctx, u, nil); err == nil {
			t.Errorf("Open(%q): no error", u)
		} else if !strings.Contains(err.Error(), "zarr:") {
			t.Errorf("Open(%q): %v", u, err)
		}
	}
	s, err := blobstore.Open(ctx, "file://"+filepath.ToSlash(t.TempDir())+"/x.zarr", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, k := range []string{"../y", "a/../../y", "/abs", "a//b", ""} {
		var ae *zarr.ArgumentError
		if _, err := s.Get(ctx, k); !errors.As(err, &ae) {
			t.Errorf("Get(%q): %v, want an ArgumentError", k, err)
		}
		if err := s.Put(ctx, k, nil); !errors.As(err, &ae) {
			t.Errorf("Put(%q): %v, want an ArgumentError", k, err)
		}
	}
	if _, err := s.Get(ctx, "missing"); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("Get of a missing key: %v, want ErrNotFound", err)
	}
	checkRanges(t, s)
	// The same on S3, where the last bytes are one suffix-range GET.
	srv := s3test.New(t)
	s3, err := blobstore.Open(ctx, srv.URL("ranges"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	checkRanges(t, s3)
}

// checkRanges: ranges past a value's end are FormatErrors; the last bytes
// and a range inside are the value's; a missing key is ErrNotFound.
func checkRanges(t *testing.T, s *blobstore.Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.GetRange(ctx, "missing", -1, 4); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("GetRange of a missing key: %v, want ErrNotFound", err)
	}
	if err := s.Put(ctx, "short", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	var fe *zarr.FormatError
	for _, r := range [][2]int64{{0, 4}, {-1, 4}, {2, 2}, {3, 1}} {
		if _, err := s.GetRange(ctx, "short", r[0], r[1]); !errors.As(err, &fe) {
			t.Errorf("GetRange(%v) past a 3-byte value's end: %v, want a FormatError", r, err)
		}
	}
	if b, err := s.GetRange(ctx, "short", -1, 2); err != nil || string(b) != "bc" {
		t.Errorf("GetRange(last 2) = %q, %v", b, err)
	}
	if b, err := s.GetRange(ctx, "short", 1, 1); err != nil || string(b) != "b" {
		t.Errorf("GetRange(1, 1) = %q, %v", b, err)
	}
}

// TestS3Unreachable: an endpoint where nothing listens is retried, then
// reported with the number of tries.
func TestS3Unreachable(t *testing.T) {
	s3test.New(t) // the environment
	ctx := context.Background()
	s, err := blobstore.Open(ctx, "s3://vol/x.zarr?endpoint=http://127.0.0.1:1", fastRetry)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Get(ctx, "zarr.json"); err == nil || !strings.Contains(err.Error(), "tries") {
		t.Errorf("Get from a closed port: %v, want an error after several tries", err)
	}
}

// TestS3LargePut: a value larger than an upload part (a shard of tens of
// MiB) goes up in parts, and reads back whole; with requests failing
// too (30%: a few of its seven requests).
func TestS3LargePut(t *testing.T) {
	srv := s3test.New(t)
	ctx := context.Background()
	s, err := blobstore.Open(ctx, srv.URL("big.zarr"), fastRetry)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data := make([]byte, 20<<20+12345)
	r := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < len(data); i += 8 {
		v := r.Uint64()
		for k := 0; k < 8 && i+k < len(data); k++ {
			data[i+k] = byte(v >> (8 * k))
		}
	}
	for _, rate := range []float64{0, 0.3} {
		srv.Reset()
		srv.Fail(rate, 5)
		err := s.Put(ctx, "c/0", data)
		var got, tail []byte
		if err == nil {
			got, err = s.Get(ctx, "c/0")
		}
		if err == nil {
			tail, err = s.GetRange(ctx, "c/0", -1, 1000)
		}
		log, failed := srv.Reset()
		srv.Fail(0, 0)
		if err != nil {
			t.Fatalf("%.0f%% failing: %v", rate*100, err)
		}
		if !bytes.Equal(got, data) || !bytes.Equal(tail, data[len(data)-1000:]) {
			t.Fatalf("%.0f%% failing: read back differs", rate*100)
		}
		if rate > 0 && failed == 0 {
			t.Errorf("none of %d requests failed", len(log))
		}
		t.Logf("%.0f%% failing: %d requests (%d PUTs, %d POSTs), %d failed", rate*100, len(log),
			s3test.Count(log, "PUT"), s3test.Count(log, "POST"), failed)
	}
}
