package chunk

import "github.com/ndconv/ndconv/nd"

// How a GPU backend's pipeline cuts a problem that fits its memory but is
// large enough to gain from overlapping transfers with kernels: into about
// PiecesPerProblem pieces, none below MinPieceBytes (each piece costs a
// few launches, copies and events) nor above MaxPieceBytes (the pinned
// staging of the pieces in flight stays small beside the data), and each
// at least HaloFactor times the input rows its halo adds along axis 0, so
// that rows read twice stay a small part of the copies.
const (
	PiecesPerProblem = 16
	MinPieceBytes    = 4 << 20
	MaxPieceBytes    = 256 << 20
	HaloFactor       = 16
)

// Pieces splits p for a GPU backend's pipeline of depth chunks in flight:
// each chunk's input, output and scratch within budget/depth bytes, and a
// problem that fits the budget whole still cut into pieces of about piece
// bytes (0: chosen as the constants above say) so that its transfers
// overlap its kernels. A problem that fits and is below two pieces of
// MinPieceBytes (when piece is 0) is one chunk.
func Pieces(p *nd.Problem, budget int64, depth int, piece int64, scratch func(*nd.Problem) int64) ([]Chunk, error) {
	in, _ := nd.ShapeElements(p.InShape)
	out, _ := nd.ShapeElements(p.FullShape())
	total := int64(in)*int64(p.In.Size()) + int64(out)*int64(p.Out.Size())
	if scratch != nil {
		total += scratch(p)
	}
	if piece <= 0 {
		if total <= budget && total < 2*MinPieceBytes {
			return []Chunk{whole(p)}, nil
		}
		piece = min(max(total/PiecesPerProblem, MinPieceBytes), MaxPieceBytes)
		if len(p.InShape) > 0 && p.InShape[0] > 0 {
			halo := int64(p.KShape[0]-1) * (int64(in) / int64(p.InShape[0])) * int64(p.In.Size())
			piece = max(piece, HaloFactor*halo)
		}
	}
	chunks, err := Split(p, Budget{Bytes: min(piece, budget/int64(max(depth, 1))), Scratch: scratch})
	if err != nil || total > budget {
		return chunks, err
	}
	return ramp(p, chunks), nil
}

// RampMinChunks is the fewest runs along axis 0 that ramp cuts further.
const RampMinChunks = 4

// ramp cuts the first and the last of a problem's runs of rows along axis
// 0 each into a quarter and the rest, the quarters outermost, when there
// are at least RampMinChunks runs. A pipeline's copy-out stream starts
// once the first chunk is in and computed, and ends once the last is
// computed and out: small chunks at both ends shorten that fill and drain,
// which the other copies do not hide (S002, 1500² in 7 pieces: the first
// piece's copy-in and kernel, 0.06 of 0.31 ms a round). Chunks along later
// axes, and problems cut for memory, stay as they are.
func ramp(p *nd.Problem, cs []Chunk) []Chunk {
	if len(cs) < RampMinChunks || len(p.OutShape) == 0 {
		return cs
	}
	for _, c := range cs {
		for d := 1; d < len(p.OutShape); d++ {
			if c.OutLo[d] != 0 || c.OutHi[d] != p.OutShape[d] {
				return cs
			}
		}
	}
	strides := nd.Strides(p.OutShape)
	bank := len(p.Kernels)
	// A quarter of a run of rows, its first (or last) rows: none where
	// the run is shorter than 4 rows (a short last run is small already).
	cut := func(c Chunk, quarterFirst bool) []Chunk {
		lo, hi := c.OutLo[0], c.OutHi[0]
		q := (hi - lo) / 4
		switch {
		case q == 0:
			return []Chunk{c}
		case quarterFirst:
			return []Chunk{run(p, nil, 0, lo, lo+q, strides, bank), run(p, nil, 0, lo+q, hi, strides, bank)}
		default:
			return []Chunk{run(p, nil, 0, lo, hi-q, strides, bank), run(p, nil, 0, hi-q, hi, strides, bank)}
		}
	}
	out := cut(cs[0], true)
	out = append(out, cs[1:len(cs)-1]...)
	return append(out, cut(cs[len(cs)-1], false)...)
}
