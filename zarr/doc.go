// Package zarr reads and writes Zarr arrays (https://zarr.dev): version 3,
// sharded or not, and version 2, in a Store of bytes under keys (a
// directory here; buckets in package zarr/blobstore, which keeps the
// cloud SDKs out of this one). It owns
// the subset of Zarr ndconv's users keep volumes in, written from the
// specs and checked against zarr-python's and tensorstore's files:
//
//   - metadata: v3 zarr.json (regular chunk grid; chunk keys "default" or
//     "v2" with "/" or "."), v2 .zarray and .zattrs (order C or F,
//     dimension_separator "." or "/"); groups, and an array inside a
//     group addressed by its path ("group/array");
//   - data types: every nd.DType (int8 to uint64, float16, float32,
//     float64, complex64, complex128) in either byte order; bool reads as
//     uint8;
//   - codecs: transpose, bytes (little or big), sharding_indexed (index at
//     the end or the start, with crc32c), gzip, zlib, zstd, crc32c, and
//     blosc (no shuffle, byte or bit shuffle; lz4, lz4hc, zstd, zlib and
//     blosclz read, all but blosclz written);
//   - fill values, "NaN", "Infinity", "-Infinity" and hex bit patterns
//     included: a chunk or shard not stored, and a chunk a shard's index
//     marks empty, read as the fill value;
//   - OME-Zarr 0.4 and 0.5 multiscales: axes, and each level's scale and
//     translation (ReadMultiscales, LevelOf, WriteMultiscale).
//
// Open reads an array's metadata; ReadRegion reads any box of it (a shard
// is read whole when the box covers it, else by ranged reads of its index
// and the chunks needed, several at once); ReadAll reads it whole. A
// ConcurrentStore (object storage) gets as many reads in flight as it
// asks for. Create writes the metadata of a new array, v3 with shards
// unless Meta says otherwise; WriteChunk and WriteRegion write whole
// shards (or chunks), each in one Put, so that a writer that owns a shard
// writes it once and atomically, and a shard or chunk that holds only the
// fill value is not stored.
//
// # Conventions
//
// Arrays are nd.Array values: C order, the machine's byte order. Shapes,
// starts and grid indices are per axis, slowest first. A chunk's shape is
// that of the unit compressed and read alone; a shard's is that of the
// unit stored under one key (the chunk itself for an array that is not
// sharded).
//
// Stored bytes are never trusted: metadata is checked before it is used
// (at most 32 axes, a chunk or shard of at most MaxChunkBytes), and every
// decoder bounds what it produces by the chunk's size before allocating
// it, so that a corrupt header fails with a *FormatError that names the
// key instead of allocating gigabytes or panicking. Valid Zarr that this
// package does not handle is an *UnsupportedError; a bad call an
// *ArgumentError.
package zarr
