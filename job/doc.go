// Package job runs a filter over a Zarr output in N-D blocks, the same
// way wherever the blocks run: in one process, as the workers of a
// Kubernetes or Slurm array job, or inside another engine (an Apache Beam
// DoFn, a Dask task). It owns the plan file (Spec: inputs and outputs by
// URL, the filters' weights, every option, the block grid and a hash of
// all of it), the output array's creation (Create, which records the
// plan's hash in the array's attributes), the block function (Runner.Run:
// a pure function of the plan and a block index, whose writes are whole
// shards, each stored atomically, so that a block run again writes the
// same bytes, and which removes the temporary files that a writer killed
// mid-write left beside its blocks' shards) and the progress read back
// from what is stored (Status).
//
// No scheduler lives here: an engine only decides where each block index
// runs. A block is done when every shard it covers is stored; a shard
// that holds only the fill value is not stored by Zarr, so the block's
// writer leaves an empty marker for it under the array's
// "ndconv_empty/" folder, which readers ignore.
//
// The Zarr machinery the blocks need lives here too: ChunkCache, which
// keeps a Zarr input's chunks decoded for the neighbouring blocks' halos,
// and Sink, which writes a block's shards (only those not stored yet,
// when resuming) and tells which blocks are stored whole.
package job
