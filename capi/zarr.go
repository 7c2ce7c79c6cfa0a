package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"unsafe"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
)

// Zarr arrays for writers in other processes (python/ndconv/dask.py's
// to_zarr): one process creates the array's metadata
// (ndconv_zarr_create), and each writer opens it by its URL
// (ndconv_zarr_open) and writes regions on its shard grid
// (ndconv_zarr_write_region: zarr.Array.WriteRegion, each shard whole in
// one Put, so that a region written again writes the same bytes).

// zarrSpec is the JSON ndconv_zarr_create takes.
type zarrSpec struct {
	URL    string `json:"url"` // a path or bucket URL with a component ending in .zarr
	Shape  []int  `json:"shape"`
	DType  string `json:"dtype"`
	Chunks []int  `json:"chunks"` // the chunk shape; nil: zarr.DefaultChunkShape
	// Shards is the shard shape (whole chunks per axis), nil for an
	// array without shards (every Zarr v2 array).
	Shards     []int     `json:"shards"`
	Format     int       `json:"format"`     // 2 or 3 (0: 3)
	Compressor string    `json:"compressor"` // zstd, gzip, zlib, blosc or "" (none)
	Level      int       `json:"level"`      // the compressor's level, 0 its default
	FillValue  jsonFloat `json:"fill_value"`
	// Resume keeps an array of the same layout already there, with its
	// shards (imageio.CreateZarr's resume); otherwise what the URL held
	// is removed first.
	Resume bool `json:"resume"`
}

// zarrInfo is what ndconv_zarr_open and ndconv_zarr_info report.
type zarrInfo struct {
	Shape  []int  `json:"shape"`
	DType  string `json:"dtype"`
	Chunks []int  `json:"chunks"`
	Shards []int  `json:"shards"` // the unit stored under one key: the shard, or the chunk
	Format int    `json:"format"`
}

// zarrArrays are the open Zarr arrays by handle.
var zarrArrays idTable[*zarr.Array]

func addZarr(a *zarr.Array, out *int64) { *out = zarrArrays.add(a) }

func getZarr(id int64) (*zarr.Array, error) {
	a, ok := zarrArrays.get(id)
	if !ok {
		return nil, fmt.Errorf("capi: no Zarr array %d (closed?)", id)
	}
	return a, nil
}

// decodeZarrSpec reads and checks a ndconv_zarr_create request: one JSON
// object of zarrSpec's fields, unknown ones refused.
func decodeZarrSpec(b []byte) (zarrSpec, zarr.Meta, error) {
	var s zarrSpec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, zarr.Meta{}, argError("request", "malformed JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return s, zarr.Meta{}, argError("request", "malformed JSON: data after the request's object")
	}
	if !imageio.IsZarr(s.URL) {
		return s, zarr.Meta{}, argError("url", "%q names no Zarr array (no path component ends in .zarr)", s.URL)
	}
	dt, err := nd.ParseDType(s.DType)
	if err != nil {
		return s, zarr.Meta{}, err
	}
	rank := len(s.Shape)
	if rank == 0 {
		return s, zarr.Meta{}, argError("shape", "a Zarr array needs at least one axis")
	}
	for _, n := range s.Shape {
		if n < 0 {
			return s, zarr.Meta{}, argError("shape", "%v has a negative length", s.Shape)
		}
	}
	if _, err := nd.NumElements(s.Shape); err != nil {
		return s, zarr.Meta{}, err
	}
	if s.Format != 0 && s.Format != 2 && s.Format != 3 {
		return s, zarr.Meta{}, argError("format", "%d (give 2 or 3)", s.Format)
	}
	switch s.Compressor {
	case "", "zstd", "gzip", "zlib", "blosc":
	default:
		return s, zarr.Meta{}, &nd.UnsupportedError{What: "compressor", Value: s.Compressor, Supported: "zstd, gzip, zlib, blosc, \"\" (none)"}
	}
	chunks := s.Chunks
	if chunks == nil {
		chunks = zarr.DefaultChunkShape(s.Shape, dt)
	}
	if len(chunks) != rank {
		return s, zarr.Meta{}, argError("chunks", "%v for an array of %d axes", chunks, rank)
	}
	for _, c := range chunks {
		if c < 1 {
			return s, zarr.Meta{}, argError("chunks", "%v: every length must be at least 1", chunks)
		}
	}
	if s.Shards != nil {
		if s.Format == 2 {
			return s, zarr.Meta{}, argError("shards", "Zarr v2 has no shards (give format 3, or no shards)")
		}
		if len(s.Shards) != rank {
			return s, zarr.Meta{}, argError("shards", "%v for an array of %d axes", s.Shards, rank)
		}
		for d, n := range s.Shards {
			if n < 1 || n%chunks[d] != 0 {
				return s, zarr.Meta{}, argError("shards", "%v is not a whole number of chunks %v per axis", s.Shards, chunks)
			}
		}
	}
	m := zarr.Meta{Format: s.Format, Shape: slices.Clone(s.Shape), DType: dt, ChunkShape: slices.Clone(chunks),
		ShardShape: slices.Clone(s.Shards), Compressor: zarr.Compressor{Name: s.Compressor, Level: s.Level},
		FillValue: float64(s.FillValue)}
	if m.Format == 0 {
		m.Format = 3
	}
	return s, m, nil
}

// zarrCreate is ndconv_zarr_create: it writes the metadata of a new array
// (imageio.CreateZarr, with the layout the request gives) and returns a
// handle to write it through.
func zarrCreate(spec unsafe.Pointer, out *int64, errbuf unsafe.Pointer, errlen int32) (rc int32) {
	defer guard("ndconv_zarr_create", &rc, errbuf, errlen)
	enter("ndconv_zarr_create")
	if spec == nil || out == nil {
		return fail(argError("request", "NULL request or handle pointer"), errbuf, errlen)
	}
	b, err := cString(spec, maxRequest)
	if err != nil {
		return fail(argError("request", "%v", err), errbuf, errlen)
	}
	s, m, err := decodeZarrSpec(b)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	opt := imageio.WriteOptions{Meta: imageio.Meta{Zarr: &imageio.ZarrMeta{Array: m}}}
	a, err := imageio.CreateZarr(context.Background(), s.URL, m.Shape, m.DType, opt, s.Resume)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	addZarr(a, out)
	return codeOK
}

// zarrOpen is ndconv_zarr_open: the array at url, to read and write.
func zarrOpen(url unsafe.Pointer, out *int64, errbuf unsafe.Pointer, errlen int32) (rc int32) {
	defer guard("ndconv_zarr_open", &rc, errbuf, errlen)
	enter("ndconv_zarr_open")
	if url == nil || out == nil {
		return fail(argError("url", "NULL url or handle pointer"), errbuf, errlen)
	}
	b, err := cString(url, maxRequest)
	if err != nil {
		return fail(argError("url", "%v", err), errbuf, errlen)
	}
	if !imageio.IsZarr(string(b)) {
		return fail(argError("url", "%q names no Zarr array (no path component ends in .zarr)", b), errbuf, errlen)
	}
	a, _, err := imageio.OpenZarr(context.Background(), string(b))
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	addZarr(a, out)
	return codeOK
}

// zarrInfoOf is ndconv_zarr_info: the array's layout as JSON.
func zarrInfoOf(id int64, buf unsafe.Pointer, n int32, errbuf unsafe.Pointer, errlen int32) (rc int32) {
	defer guard("ndconv_zarr_info", &rc, errbuf, errlen)
	enter("ndconv_zarr_info")
	if buf == nil || n <= 0 {
		return fail(argError("info buffer", "NULL or %d bytes", n), errbuf, errlen)
	}
	a, err := getZarr(id)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	m := a.Meta()
	b, err := json.Marshal(zarrInfo{Shape: a.Shape(), DType: a.DType().String(), Chunks: a.ChunkShape(),
		Shards: a.ShardShape(), Format: m.Format})
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	if len(b)+1 > int(n) {
		return fail(argError("info buffer", "%d bytes, the array's info needs %d", n, len(b)+1), errbuf, errlen)
	}
	dst := unsafe.Slice((*byte)(buf), int(n))
	dst[copy(dst, b)] = 0
	return codeOK
}

// regionArgs reads a region's start and shape (rank int64s each) and
// checks the buffer's byte count against the array's dtype.
func regionArgs(a *zarr.Array, start, shape unsafe.Pointer, rank int32, p unsafe.Pointer, nbytes int64) ([]int, []int, error) {
	if int(rank) != len(a.Shape()) {
		return nil, nil, argError("rank", "%d for an array of %d axes", rank, len(a.Shape()))
	}
	if start == nil || shape == nil {
		return nil, nil, argError("region", "NULL start or shape")
	}
	if err := buffer("buffer", p, nbytes); err != nil {
		return nil, nil, err
	}
	st, sh := make([]int, rank), make([]int, rank)
	for d := range int(rank) {
		st[d] = int(*(*int64)(unsafe.Add(start, 8*d)))
		sh[d] = int(*(*int64)(unsafe.Add(shape, 8*d)))
		if sh[d] < 0 {
			return nil, nil, argError("region", "shape %v has a negative length", sh)
		}
	}
	if err := sized(a.DType(), sh, nbytes); err != nil {
		return nil, nil, err
	}
	return st, sh, nil
}

// typed is the caller's buffer as an array of the Zarr array's dtype: a
// view, or where p is not aligned for the dtype (a buffer numpy or a
// pickle left at an odd address) a new array, the caller's bytes copied
// in when in is true; copied reports that.
func typed(dt nd.DType, shape []int, p unsafe.Pointer, nbytes int64, in bool) (a nd.Array, copied bool, err error) {
	if aligned(p, dt) {
		return view(dt, shape, p, nbytes), false, nil
	}
	if a, err = nd.New(dt, shape...); err != nil {
		return a, false, err
	}
	if in && nbytes > 0 {
		copy(a.Bytes(), unsafe.Slice((*byte)(p), nbytes))
	}
	return a, true, nil
}

// zarrWriteRegion is ndconv_zarr_write_region: src (C order, the array's
// dtype, native byte order) written at start, a region on the shard grid
// (zarr.Array.WriteRegion: each shard it covers stored whole, in one Put).
func zarrWriteRegion(id int64, start, shape unsafe.Pointer, rank int32, src unsafe.Pointer, nbytes int64, errbuf unsafe.Pointer, errlen int32) (rc int32) {
	defer guard("ndconv_zarr_write_region", &rc, errbuf, errlen)
	enter("ndconv_zarr_write_region")
	a, err := getZarr(id)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	st, sh, err := regionArgs(a, start, shape, rank, src, nbytes)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	buf, _, err := typed(a.DType(), sh, src, nbytes, true)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	// A task run again after its worker died (dask retries it elsewhere)
	// clears the temporary files that worker left beside these shards.
	if _, err := a.RemoveStale(context.Background(), [][]int{st}, [][]int{sh}); err != nil {
		return fail(err, errbuf, errlen)
	}
	if err := a.WriteRegion(context.Background(), st, buf); err != nil {
		return fail(err, errbuf, errlen)
	}
	return codeOK
}

// zarrReadRegion is ndconv_zarr_read_region: the box at start of shape
// into dst (C order, the array's dtype).
func zarrReadRegion(id int64, start, shape unsafe.Pointer, rank int32, dst unsafe.Pointer, nbytes int64, errbuf unsafe.Pointer, errlen int32) (rc int32) {
	defer guard("ndconv_zarr_read_region", &rc, errbuf, errlen)
	enter("ndconv_zarr_read_region")
	a, err := getZarr(id)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	st, sh, err := regionArgs(a, start, shape, rank, dst, nbytes)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	buf, copied, err := typed(a.DType(), sh, dst, nbytes, false)
	if err != nil {
		return fail(err, errbuf, errlen)
	}
	if err := a.ReadRegion(context.Background(), st, sh, buf); err != nil {
		return fail(err, errbuf, errlen)
	}
	if copied && nbytes > 0 {
		copy(unsafe.Slice((*byte)(dst), nbytes), buf.Bytes())
	}
	return codeOK
}

// zarrClose is ndconv_zarr_close: the handle is forgotten (the array
// holds no open files between calls); a second close is an error.
func zarrClose(id int64, errbuf unsafe.Pointer, errlen int32) (rc int32) {
	defer guard("ndconv_zarr_close", &rc, errbuf, errlen)
	enter("ndconv_zarr_close")
	if _, ok := zarrArrays.take(id); !ok {
		return fail(fmt.Errorf("capi: no Zarr array %d (closed already?)", id), errbuf, errlen)
	}
	return codeOK
}
