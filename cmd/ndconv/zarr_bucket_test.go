package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/internal/enginetest"
	"github.com/ndconv/ndconv/internal/s3test"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
	"github.com/ndconv/ndconv/zarr/blobstore"
)

// zarrStoreBytes is every key of the Zarr store at root (a directory or a
// bucket URL) with its value.
func zarrStoreBytes(t *testing.T, root string) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	var s zarr.Store = zarr.NewDirStore(root)
	if blobstore.IsURL(root) {
		bs, err := blobstore.Open(ctx, root, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer bs.Close()
		s = bs
	}
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

func sameZarrStore(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	keys := func(m map[string][]byte) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		slices.Sort(k)
		return k
	}
	if len(want) == 0 || !slices.Equal(keys(got), keys(want)) {
		t.Fatalf("%s: keys %v, want the local run's %v", what, keys(got), keys(want))
	}
	for k, v := range want {
		if !bytes.Equal(got[k], v) {
			t.Errorf("%s: %s differs from the local run's", what, k)
		}
	}
}

// TestZarrBucketCLI runs ndconv correlate with .zarr inputs and outputs in
// a bucket (an S3 server on loopback, its endpoint from
// AWS_ENDPOINT_URL_S3): bucket to bucket, local to bucket and bucket to
// local each write the bytes the local run writes, and so does bucket to
// bucket with 5% of the requests failing.
func TestZarrBucketCLI(t *testing.T) {
	srv := s3test.New(t)
	env := srv.Env()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(30, 2))
	vol := enginetest.RandomArray(rng, nd.Float32, 24, 30, 20)
	if err := imageio.WriteFile(filepath.Join(dir, "in.zarr"), vol, imageio.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The same array in the bucket, copied object by object.
	for k, v := range zarrStoreBytes(t, filepath.Join(dir, "in.zarr")) {
		bs, err := blobstore.Open(context.Background(), srv.URL("in.zarr"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := bs.Put(context.Background(), k, v); err != nil {
			t.Fatal(err)
		}
		bs.Close()
	}
	writeNPY(t, filepath.Join(dir, "k.npy"), enginetest.RandomArray(rng, nd.Float32, 3, 3, 3))

	run := func(in, out string) {
		t.Helper()
		if code, _ := runWithEnv(t, dir, env, "correlate", "-q", "--device", "cpu", "-k", "k.npy", in, out); code != 0 {
			t.Fatalf("correlate %s %s: exit %d", in, out, code)
		}
	}
	run("in.zarr", "out.zarr")
	want := zarrStoreBytes(t, filepath.Join(dir, "out.zarr"))
	run("s3://vol/in.zarr", "s3://vol/out.zarr")
	sameZarrStore(t, "s3 to s3", zarrStoreBytes(t, srv.URL("out.zarr")), want)
	run("in.zarr", "s3://vol/mixed.zarr")
	sameZarrStore(t, "local to s3", zarrStoreBytes(t, srv.URL("mixed.zarr")), want)
	run("s3://vol/in.zarr", "back.zarr")
	sameZarrStore(t, "s3 to local", zarrStoreBytes(t, filepath.Join(dir, "back.zarr")), want)

	srv.Reset()
	srv.Fail(0.05, 11)
	run("s3://vol/in.zarr", "s3://vol/failing.zarr")
	log, failed := srv.Reset()
	srv.Fail(0, 0)
	sameZarrStore(t, "s3 to s3, 5% failing", zarrStoreBytes(t, srv.URL("failing.zarr")), want)
	if failed == 0 {
		t.Errorf("none of %d requests failed", len(log))
	}

	// An array the bucket does not hold: one line that names it.
	cmd := exec.Command(binaryPath, "correlate", "-q", "--device", "cpu", "-k", "k.npy", "s3://vol/missing.zarr", "x.zarr")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "s3://vol/missing.zarr") ||
		strings.Count(strings.TrimSpace(stderr.String()), "\n") > 1 {
		t.Errorf("a missing array: %v, stderr %q", err, stderr.String())
	} else {
		t.Logf("a missing array: %s", strings.TrimSpace(stderr.String()))
	}
}
