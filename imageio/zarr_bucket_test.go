package imageio

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/internal/s3test"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
	"github.com/ndconv/ndconv/zarr/blobstore"
)

func TestZarrPathURL(t *testing.T) {
	for _, c := range []struct{ in, root, inner string }{
		{"s3://b/d/x.zarr/g/a?endpoint=http://127.0.0.1:9", "s3://b/d/x.zarr?endpoint=http://127.0.0.1:9", "g/a"},
		{"s3://b/x.zarr", "s3://b/x.zarr", ""},
		{"gs://b/v/x.ZARR/0/", "gs://b/v/x.ZARR", "0"},
		{"az://c/x.zarr/0", "az://c/x.zarr", "0"},
		{"file:///d/x.zarr/g", "file:///d/x.zarr", "g"},
	} {
		root, inner, ok := zarrPath(c.in)
		if !ok || root != c.root || inner != c.inner {
			t.Errorf("zarrPath(%q) = %q, %q, %v; want %q, %q", c.in, root, inner, ok, c.root, c.inner)
		}
	}
	for _, p := range []string{"s3://b/x.npy", "s3://b/", "s3:///x.zarr", "file://h/x.zarr"} {
		if _, _, ok := zarrPath(p); ok {
			t.Errorf("zarrPath(%q) found a Zarr array", p)
		}
	}
	var ue *UnsupportedError
	if _, _, err := ReadFile("s3://b/x.npy", RawOptions{}); !errors.As(err, &ue) || !strings.Contains(err.Error(), ".zarr") {
		t.Errorf("ReadFile of a bucket URL that is not Zarr: %v", err)
	}
}

// storeContents is every key of the store at root (a directory or a URL)
// with its value.
func storeContents(t *testing.T, root string) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	s, done, err := openZarrStore(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
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

func sameStore(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	keys := func(m map[string][]byte) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		slices.Sort(k)
		return k
	}
	if !slices.Equal(keys(got), keys(want)) {
		t.Fatalf("%s: keys %v, want the local store's %v", what, keys(got), keys(want))
	}
	for k, v := range want {
		if !bytes.Equal(got[k], v) {
			t.Errorf("%s: %s differs from the local store's", what, k)
		}
	}
}

// TestZarrBucket writes and reads .zarr arrays in a bucket (an S3 server on
// loopback) through WriteFile and ReadFile: the objects equal the local
// store's files byte for byte, local in and bucket out carries the
// input's layout as local out does, and with 5% of requests failing the
// bytes are the same.
func TestZarrBucket(t *testing.T) {
	srv := s3test.New(t)
	dir := t.TempDir()
	a, _ := nd.New(nd.Float32, 12, 40, 33)
	for i := range a.Data.([]float32) {
		a.Data.([]float32)[i] = float32(i%251) * 0.25
	}
	local := filepath.Join(dir, "x.zarr", "g", "arr")
	remote := srv.URL("vols/x.zarr/g/arr")
	for _, p := range []string{local, remote} {
		if err := CheckWritable(p); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(p, a, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sameStore(t, "s3 out", storeContents(t, srv.URL("vols/x.zarr")), storeContents(t, filepath.Join(dir, "x.zarr")))
	b, meta, err := ReadFile(remote, RawOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) || !slices.Equal(a.Shape, b.Shape) || meta.Zarr == nil || meta.Zarr.Array.ShardShape == nil {
		t.Fatalf("read back from the bucket differs (meta %+v)", meta.Zarr)
	}
	if h, ok := ReadHeader(remote, RawOptions{}); !ok || !slices.Equal(h.Shape, a.Shape) || h.DType != nd.Float32 {
		t.Errorf("ReadHeader(%s) = %+v, %v", remote, h, ok)
	}

	// A v2 input, local, written to the bucket and to a directory with
	// its layout: the same bytes.
	ctx := context.Background()
	in := filepath.Join(dir, "in.zarr")
	arr, err := zarr.Create(ctx, zarr.NewDirStore(in), "", zarr.Meta{Format: 2, Shape: a.Shape, DType: nd.Float32,
		ChunkShape: []int{5, 16, 16}, Compressor: zarr.Compressor{Name: "zlib"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := arr.WriteRegion(ctx, []int{0, 0, 0}, a); err != nil {
		t.Fatal(err)
	}
	c, inMeta, err := ReadFile(in, RawOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(dir, "v2out.zarr"), c, WriteOptions{Meta: inMeta}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(srv.URL("v2out.zarr"), c, WriteOptions{Meta: inMeta}); err != nil {
		t.Fatal(err)
	}
	want := storeContents(t, filepath.Join(dir, "v2out.zarr"))
	if _, ok := want[".zarray"]; !ok {
		t.Fatalf("the local v2 output has no .zarray: %v", want)
	}
	sameStore(t, "v2 to s3", storeContents(t, srv.URL("v2out.zarr")), want)

	// Bucket in, bucket out, with 5% of requests failing.
	srv.Reset()
	srv.Fail(0.05, 7)
	d, m2, err := ReadFile(srv.URL("v2out.zarr"), RawOptions{})
	if err == nil {
		err = WriteFile(srv.URL("copy.zarr"), d, WriteOptions{Meta: m2})
	}
	log, failed := srv.Reset()
	srv.Fail(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.Bytes(), a.Bytes()) {
		t.Error("read through failures differs")
	}
	sameStore(t, "copy through failures", storeContents(t, srv.URL("copy.zarr")), want)
	if failed == 0 {
		t.Errorf("none of %d requests failed", len(log))
	}

	// file:// writes the files a path does.
	fileURL := "file://" + filepath.ToSlash(filepath.Join(dir, "f.zarr"))
	if err := WriteFile(fileURL+"/g/arr", a, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	sameStore(t, "file://", storeContents(t, filepath.Join(dir, "f.zarr")), storeContents(t, filepath.Join(dir, "x.zarr")))
	if !blobstore.IsURL(fileURL) {
		t.Error("file:// is not a URL")
	}
	// A missing array in a bucket is a clear error.
	if _, _, err := ReadFile(srv.URL("none.zarr"), RawOptions{}); !errors.Is(err, zarr.ErrNotFound) {
		t.Errorf("ReadFile of a missing array: %v", err)
	}
}
