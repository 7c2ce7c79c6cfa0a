// Package chunk is ndconv's one chunk engine: it splits an nd.Problem into
// halo'd chunks whose results, put side by side, equal the unsplit result
// bit for bit. Every split of a problem — device memory on a GPU, streaming
// a file larger than memory, and any split still to come (Zarr blocks,
// several GPUs) — goes through Split.
//
// A chunk writes a run of output rows along one axis (the split axis), one
// output index on every axis before it and all of every axis after it, so
// its output is one contiguous range of the whole output in C order. It
// reads, per axis, a list of real input rows in order, and carries a
// sub-problem (an nd.Problem of its own) that computes its output from
// them:
//
//   - where the rows a chunk reads lie inside the input, or the border is
//     Constant, the chunk reads the real rows only and the sub-problem's
//     shift places the rest outside its input, where the border rule gives
//     the same values as before (cval for Constant);
//   - otherwise the border rule maps every row read to a real row (at any
//     distance, n = 1, kernels larger than the input), and the sub-problem
//     reads those rows with shift 0, so it needs no border along that axis.
//
// Each output value of a sub-problem is then the same taps times the same
// input values in the same order as in the whole problem, so every engine
// and method (direct, separable with its per-pass constant border) gives
// the same bits chunked or not.
//
// Split cuts along the slowest axes only. A Grid cuts every axis into N-D
// blocks of one shape (NewGrid), or the largest within a byte budget whose
// extents are multiples of a storage's chunks or shards (GridFor), so that
// each block writes whole storage chunks, once. Block(i) is a pure
// function of the problem and i: its output box, the real input rows it
// reads per axis (the same axisRows as a chunk's, so the border rule is
// applied in one place, nd.Border.Index, and wrap reads the far side) and
// its sub-problem. Regions lists the boxes of real input a block reads
// (one for an interior block), CopyBox moves a box between two C-order
// arrays, and RunBlocks computes every block with a caller's engine: a few
// workers in flight, each reading its block's boxes from a Source, and
// writing its output to a Sink whole, so host memory holds those blocks
// whatever the volume.
//
// The GPU backends' pipelines share what is not theirs: Pieces cuts a
// problem for a pipeline of a few chunks in flight (large problems into
// pieces whose transfers overlap kernels, or what the memory budget
// allows), Gather and Copy move a chunk's input into pinned staging and
// its output out of it on several cores, Pipeline orders the slots
// (drain a slot, then queue the next chunk into it; errors, cancellation
// and progress), and a Timeline records each chunk's copy in, kernels and
// copy out as Spans. The package depends only on nd.
package chunk
