package chunk

import "github.com/ndconv/ndconv/nd"

// How a GPU backend's pipeline cuts a problem that fits its memory but is
// large enough to gain from overlapping transfers with kernels: into about
// PiecesPerProblem pieces, none below MinPieceBytes (each piece costs a
// few launches, copies and events).
const (
	PiecesPerProblem = 16
	MinPieceBytes    = 4 << 20
)

// Pieces splits p for a GPU backend's pipeline of depth chunks in flight:
// each chunk's input, output and scratch within budget/depth bytes, and a
// problem that fits the budget whole still cut into pieces of about piece
// bytes (0: a PiecesPerProblem-th of it, at least MinPieceBytes) so that
// its transfers overlap its kernels. A problem that fits and is below two
// pieces of MinPieceBytes (when piece is 0) is one chunk.
func Pieces(p *nd.Problem, budget int64, depth int, piece int64, scratch func(*nd.Problem) int64) ([]Chunk, error) {
	in, _ := nd.NumElements(p.InShape)
	out, _ := nd.NumElements(p.FullShape())
	total := int64(in)*int64(p.In.Size()) + int64(out)*int64(p.Out.Size())
	if scratch != nil {
		total += scratch(p)
	}
	if piece <= 0 {
		if total <= budget && total < 2*MinPieceBytes {
			return []Chunk{whole(p)}, nil
		}
		piece = max(total/PiecesPerProblem, MinPieceBytes)
	}
	return Split(p, Budget{Bytes: min(piece, budget/int64(max(depth, 1))), Scratch: scratch})
}
