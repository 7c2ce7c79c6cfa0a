package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/ndconv/ndconv/zarr"
)

// The Zarr entry points as a C caller (python/ndconv/_zarr.py) uses them:
// create, write regions on the shard grid, open by URL elsewhere, read.

func i64s(v ...int64) unsafe.Pointer { return unsafe.Pointer(&slices.Clone(v)[0]) }

func mustZarr(t *testing.T, spec string) int64 {
	t.Helper()
	var id int64
	var e errBuf
	if rc := zarrCreate(cstr(spec), &id, e.ptr(), e.len()); rc != 0 {
		t.Fatalf("zarrCreate(%s) = %d: %s", spec, rc, e.String())
	}
	t.Cleanup(func() { zarrClose(id, nil, 0) })
	return id
}

func TestZarrCreateWriteOpenRead(t *testing.T) {
	for _, format := range []int{3, 2} {
		t.Run(fmt.Sprint("v", format), func(t *testing.T) {
			url := filepath.Join(t.TempDir(), "a.zarr")
			shards := "[4,6]"
			if format == 2 {
				shards = "null"
			}
			id := mustZarr(t, fmt.Sprintf(`{"url":%q,"shape":[10,6],"dtype":"float32","chunks":[2,6],"shards":%s,"format":%d,"compressor":"zstd"}`, url, shards, format))
			var e errBuf
			info := make([]byte, 512)
			if rc := zarrInfoOf(id, unsafe.Pointer(&info[0]), int32(len(info)), e.ptr(), e.len()); rc != 0 {
				t.Fatal(e.String())
			}
			var got zarrInfo
			if err := json.Unmarshal(info[:slices.Index(info, 0)], &got); err != nil {
				t.Fatal(err)
			}
			unit := []int{4, 6}
			if format == 2 {
				unit = []int{2, 6}
			}
			if !slices.Equal(got.Shape, []int{10, 6}) || got.DType != "float32" || !slices.Equal(got.Chunks, []int{2, 6}) || !slices.Equal(got.Shards, unit) || got.Format != format {
				t.Fatalf("info %+v", got)
			}
			// Two regions on the grid: rows 0-3 and 4-9 (the last shard
			// cut by the array's end). The second from a misaligned
			// buffer (a pickled block's), copied.
			data := make([]float32, 60)
			for i := range data {
				data[i] = float32(i) - 7.5
			}
			if rc := zarrWriteRegion(id, i64s(0, 0), i64s(4, 6), 2, unsafe.Pointer(&data[0]), 4*24, e.ptr(), e.len()); rc != 0 {
				t.Fatal(e.String())
			}
			odd := make([]byte, 4*36+1)
			copy(odd[1:], unsafe.Slice((*byte)(unsafe.Pointer(&data[24])), 4*36))
			if rc := zarrWriteRegion(id, i64s(4, 0), i64s(6, 6), 2, unsafe.Pointer(&odd[1]), 4*36, e.ptr(), e.len()); rc != 0 {
				t.Fatal(e.String())
			}
			// Opened again by URL (another process would), read whole
			// and a box into a misaligned buffer.
			var id2 int64
			if rc := zarrOpen(cstr(url), &id2, e.ptr(), e.len()); rc != 0 {
				t.Fatal(e.String())
			}
			defer zarrClose(id2, nil, 0)
			back := make([]float32, 60)
			if rc := zarrReadRegion(id2, i64s(0, 0), i64s(10, 6), 2, unsafe.Pointer(&back[0]), 4*60, e.ptr(), e.len()); rc != 0 {
				t.Fatal(e.String())
			}
			if !slices.Equal(back, data) {
				t.Fatalf("read back %v, wrote %v", back, data)
			}
			if rc := zarrReadRegion(id2, i64s(3, 1), i64s(2, 2), 2, unsafe.Pointer(&odd[1]), 16, e.ptr(), e.len()); rc != 0 {
				t.Fatal(e.String())
			}
			box := unsafe.Slice((*float32)(unsafe.Pointer(&back[0])), 4)
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&box[0])), 16), odd[1:17])
			if want := []float32{data[19], data[20], data[25], data[26]}; !slices.Equal(box, want) {
				t.Errorf("box %v, want %v", box, want)
			}
			// The Zarr package itself reads what the C API wrote.
			s, inner := zarr.Store(zarr.NewDirStore(url)), ""
			a, err := zarr.Open(t.Context(), s, inner)
			if err != nil {
				t.Fatal(err)
			}
			all, err := a.ReadAll(t.Context())
			if err != nil || !slices.Equal(all.Data.([]float32), data) {
				t.Fatalf("zarr.ReadAll: %v %v", err, all.Data)
			}
		})
	}
}

// Writing a region again writes the same bytes: the shard files are
// unchanged (what makes a re-run task harmless).
func TestZarrRewriteSameBytes(t *testing.T) {
	url := filepath.Join(t.TempDir(), "r.zarr")
	id := mustZarr(t, fmt.Sprintf(`{"url":%q,"shape":[8],"dtype":"int16","chunks":[2],"shards":[4]}`, url))
	data := []int16{1, 2, 3, 4, 5, 6, 7, 8}
	var e errBuf
	write := func() map[string][]byte {
		if rc := zarrWriteRegion(id, i64s(0), i64s(8), 1, unsafe.Pointer(&data[0]), 16, e.ptr(), e.len()); rc != 0 {
			t.Fatal(e.String())
		}
		files := map[string][]byte{}
		filepath.Walk(url, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				b, _ := os.ReadFile(p)
				files[p] = b
			}
			return nil
		})
		return files
	}
	first := write()
	if len(first) != 3 { // zarr.json and two shards
		t.Fatalf("files %v", slices.Collect(func(yield func(string) bool) {
			for k := range first {
				yield(k)
			}
		}))
	}
	second := write()
	for k, v := range first {
		if !slices.Equal(second[k], v) {
			t.Errorf("%s changed when written again", k)
		}
	}
}

func TestZarrArguments(t *testing.T) {
	dir := t.TempDir()
	url := filepath.Join(dir, "e.zarr")
	var e errBuf
	var id int64
	for _, c := range []struct {
		spec string
		want string
	}{
		{`{"url":"` + filepath.Join(dir, "plain") + `","shape":[4],"dtype":"float32"}`, "names no Zarr array"},
		{`{"url":"` + url + `","shape":[4],"dtype":"float32","bogus":1}`, "malformed JSON"},
		{`{"url":"` + url + `","shape":[],"dtype":"float32"}`, "at least one axis"},
		{`{"url":"` + url + `","shape":[-4],"dtype":"float32"}`, "negative"},
		{`{"url":"` + url + `","shape":[4],"dtype":"float33"}`, "float33"},
		{`{"url":"` + url + `","shape":[4],"dtype":"float32","format":4}`, "give 2 or 3"},
		{`{"url":"` + url + `","shape":[4],"dtype":"float32","compressor":"lzma"}`, "lzma"},
		{`{"url":"` + url + `","shape":[4],"dtype":"float32","chunks":[0]}`, "at least 1"},
		{`{"url":"` + url + `","shape":[4],"dtype":"float32","chunks":[2,2]}`, "1 axes"},
		{`{"url":"` + url + `","shape":[4],"dtype":"float32","chunks":[2],"shards":[3]}`, "whole number of chunks"},
		{`{"url":"` + url + `","shape":[4],"dtype":"float32","chunks":[2],"shards":[4],"format":2}`, "v2 has no shards"},
	} {
		wantErr(t, c.spec, zarrCreate(cstr(c.spec), &id, e.ptr(), e.len()), &e, 1, c.want)
	}
	wantErr(t, "NULL request", zarrCreate(nil, &id, e.ptr(), e.len()), &e, 1, "NULL")
	wantErr(t, "open missing", zarrOpen(cstr(filepath.Join(dir, "missing.zarr")), &id, e.ptr(), e.len()), &e, 2, "missing.zarr")
	z := mustZarr(t, `{"url":"`+url+`","shape":[8,4],"dtype":"float64","chunks":[2,4],"shards":[4,4]}`)
	buf := make([]float64, 32)
	p := unsafe.Pointer(&buf[0])
	wantErr(t, "off the grid", zarrWriteRegion(z, i64s(2, 0), i64s(4, 4), 2, p, 8*16, e.ptr(), e.len()), &e, 1, "shard grid")
	wantErr(t, "rank", zarrWriteRegion(z, i64s(0), i64s(4), 1, p, 8*4, e.ptr(), e.len()), &e, 1, "1 for an array of 2 axes")
	wantErr(t, "bytes", zarrWriteRegion(z, i64s(0, 0), i64s(4, 4), 2, p, 8*15, e.ptr(), e.len()), &e, 1, "needs 128 bytes")
	wantErr(t, "negative", zarrReadRegion(z, i64s(0, 0), i64s(-1, 4), 2, p, 0, e.ptr(), e.len()), &e, 1, "negative")
	wantErr(t, "NULL start", zarrReadRegion(z, nil, i64s(1, 4), 2, p, 32, e.ptr(), e.len()), &e, 1, "NULL")
	wantErr(t, "outside", zarrReadRegion(z, i64s(6, 0), i64s(4, 4), 2, p, 8*16, e.ptr(), e.len()), &e, 1, "")
	wantErr(t, "unknown handle", zarrWriteRegion(z+100, i64s(0, 0), i64s(4, 4), 2, p, 8*16, e.ptr(), e.len()), &e, 2, "no Zarr array")
	var id2 int64
	if rc := zarrOpen(cstr(url), &id2, e.ptr(), e.len()); rc != 0 {
		t.Fatal(e.String())
	}
	if rc := zarrClose(id2, e.ptr(), e.len()); rc != 0 {
		t.Fatal(e.String())
	}
	wantErr(t, "second close", zarrClose(id2, e.ptr(), e.len()), &e, 2, "closed already")
}

// A region written through the C API first clears the temporary files a
// dead writer left beside its shards (a dask task run again after its
// worker was killed mid-write); a file a live writer may still rename
// stays.
func TestZarrWriteRemovesStale(t *testing.T) {
	url := filepath.Join(t.TempDir(), "s.zarr")
	id := mustZarr(t, fmt.Sprintf(`{"url":%q,"shape":[8],"dtype":"int16","chunks":[2],"shards":[4]}`, url))
	data := []int16{1, 2, 3, 4, 5, 6, 7, 8}
	var e errBuf
	write := func() {
		if rc := zarrWriteRegion(id, i64s(0), i64s(4), 1, unsafe.Pointer(&data[0]), 8, e.ptr(), e.len()); rc != 0 {
			t.Fatal(e.String())
		}
	}
	write()
	var shard string
	filepath.Walk(url, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && fi.Name() != "zarr.json" {
			shard = p
		}
		return nil
	})
	if shard == "" {
		t.Fatal("no shard written")
	}
	dir, name := filepath.Split(shard)
	plant := func(tmp string, age time.Duration) string {
		p := filepath.Join(dir, tmp)
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		os.Chtimes(p, when, when)
		return p
	}
	dead := plant("."+name+"-4242@elsewhere-1", 2*zarr.StaleAfter) // its writer long gone
	live := plant("."+name+"-4243@elsewhere-2", time.Minute)       // may still be renamed
	write()
	if _, err := os.Stat(dead); err == nil {
		t.Error("a dead writer's temporary file was left beside the shard")
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a recent writer's temporary file was removed: %v", err)
	}
}
