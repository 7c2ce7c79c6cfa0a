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
	return Split(p, Budget{Bytes: min(piece, budget/int64(max(depth, 1))), Scratch: scratch})
}
