package filters

import (
	"fmt"
	"math"

	"github.com/ndconv/ndconv/nd"
)

// Gabor is the real part of skimage.filters.gabor_kernel (scikit-image
// 0.19): a Gaussian envelope of standard deviations SigmaX, SigmaY (before
// rotation by Theta) times the cosine cos(2π·Frequency·x′ + Offset), where
// x′ = x·cos θ + y·sin θ, normalised by 1/(2π·SigmaX·SigmaY). The kernel is
// 2-D and dense: axis 0 (rows) is y, axis 1 (columns) is x, both from −n to
// n with n = ceil(max(|NStds·σ·cos θ|, |NStds·σ′·sin θ|, 1)) as skimage
// computes it. The weights are correlation weights: the filter equals
// scipy.ndimage.correlate(x, real(gabor_kernel(…))). (skimage.filters.gabor
// convolves instead, which is the correlation with the kernel of phase
// −Offset.)
//
// Frequency (cycles per pixel) is required. Zero values mean skimage's
// defaults: Bandwidth 1; SigmaX and SigmaY derived from Bandwidth and
// Frequency (σ = √(ln 2/2)/π · (2^b+1)/(2^b−1) / f); NStds 3. Spec:
// gabor:frequency=0.2,theta=0.5,bandwidth=1,sigma_x=2,sigma_y=3,n_stds=3,offset=0.
type Gabor struct {
	Frequency, Theta, Bandwidth, SigmaX, SigmaY, NStds, Offset float64
}

// GaborBank is Orientations Gabor filters, filter k at orientation
// θ_k = Theta + k·π/Orientations, k = 0…Orientations−1. Build pads every
// kernel with zeros, symmetrically, to the bank's largest extent, so that the
// bank runs as one call on kernels of one shape; padding an odd, centred
// kernel with zero weights leaves its correlation unchanged. Each Filter's
// Name is its member's gabor spec (which builds the kernel unpadded). Spec:
// gabor-bank:orientations=8,frequency=0.2.
type GaborBank struct {
	Gabor
	Orientations int
}

const (
	defaultBandwidth = 1.0
	defaultNStds     = 3.0
)

func (g Gabor) String() string {
	w := newSpec("gabor")
	g.params(w)
	return w.String()
}

func (b GaborBank) String() string {
	w := newSpec("gabor-bank")
	w.int("orientations", b.Orientations)
	b.Gabor.params(w)
	return w.String()
}

func (g Gabor) params(w *specWriter) {
	w.add("frequency", fmt.Sprint(g.Frequency))
	w.float("theta", g.Theta)
	w.float("bandwidth", g.Bandwidth)
	w.float("sigma_x", g.SigmaX)
	w.float("sigma_y", g.SigmaY)
	w.float("n_stds", g.NStds)
	w.float("offset", g.Offset)
}

func (g Gabor) check() error { return g.checkAs("gabor") }

func (b GaborBank) check() error {
	if err := b.Gabor.checkAs("gabor-bank"); err != nil {
		return err
	}
	if b.Orientations < 1 {
		return &ParameterError{Filter: "gabor-bank", Param: "orientations", Value: fmt.Sprint(b.Orientations), Msg: "must be at least 1"}
	}
	return nil
}

func (g Gabor) checkAs(filter string) error {
	bad := func(param string, v float64, msg string) error {
		return &ParameterError{Filter: filter, Param: param, Value: fmt.Sprint(v), Msg: msg}
	}
	if !(g.Frequency > 0) || math.IsInf(g.Frequency, 0) {
		if g.Frequency == 0 {
			return &ParameterError{Filter: filter, Param: "frequency", Msg: "required (cycles per pixel, > 0)"}
		}
		return bad("frequency", g.Frequency, "must be positive and finite")
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"bandwidth", g.Bandwidth}, {"sigma_x", g.SigmaX}, {"sigma_y", g.SigmaY}, {"n_stds", g.NStds}} {
		if !(p.v >= 0) || math.IsInf(p.v, 0) {
			return bad(p.name, p.v, "must be positive and finite")
		}
	}
	if math.IsNaN(g.Theta) || math.IsInf(g.Theta, 0) {
		return bad("theta", g.Theta, "must be finite")
	}
	if math.IsNaN(g.Offset) || math.IsInf(g.Offset, 0) {
		return bad("offset", g.Offset, "must be finite")
	}
	return nil
}

// gaborShape is a Gabor with skimage's defaults filled in and its extent:
// the kernel covers −y0…y0 × −x0…x0.
type gaborShape struct {
	g      Gabor
	y0, x0 int
}

// fit fills skimage's defaults and computes the extent, failing when the
// kernel would exceed MaxWeights.
func (g Gabor) fit(filter string) (gaborShape, error) {
	if g.Bandwidth == 0 {
		g.Bandwidth = defaultBandwidth
	}
	if g.NStds == 0 {
		g.NStds = defaultNStds
	}
	b := g.Bandwidth
	// skimage's _sigma_prefactor, in its order of operations (pi is a
	// float64 variable so that 1/π rounds as numpy's does, not as a Go
	// constant expression).
	pi := math.Pi
	prefactor := 1.0 / pi * math.Sqrt(math.Log(2)/2.0) * (math.Pow(2, b) + 1) / (math.Pow(2, b) - 1)
	if g.SigmaX == 0 {
		g.SigmaX = prefactor / g.Frequency
	}
	if g.SigmaY == 0 {
		g.SigmaY = prefactor / g.Frequency
	}
	ct, st := math.Cos(g.Theta), math.Sin(g.Theta)
	x0 := math.Ceil(max(math.Abs(g.NStds*g.SigmaX*ct), math.Abs(g.NStds*g.SigmaY*st), 1))
	y0 := math.Ceil(max(math.Abs(g.NStds*g.SigmaY*ct), math.Abs(g.NStds*g.SigmaX*st), 1))
	if err := checkWeights(filter, "sigma", fmt.Sprintf("%gx%g", g.SigmaY, g.SigmaX), (2*y0+1)*(2*x0+1)); err != nil {
		return gaborShape{}, err
	}
	return gaborShape{g: g, y0: int(y0), x0: int(x0)}, nil
}

// kernel returns the Gabor's weights over −ny…ny × −nx…nx (at least its own
// extent), zero outside its own extent.
func (s gaborShape) kernel(ny, nx int) nd.Kernel {
	g := s.g
	ct, st := math.Cos(g.Theta), math.Sin(g.Theta)
	scale := 1 / (2 * math.Pi * g.SigmaX * g.SigmaY)
	shape := []int{2*ny + 1, 2*nx + 1}
	w := make([]float64, shape[0]*shape[1])
	for i := range shape[0] {
		y := float64(i - ny)
		if math.Abs(y) > float64(s.y0) {
			continue
		}
		for j := range shape[1] {
			x := float64(j - nx)
			if math.Abs(x) > float64(s.x0) {
				continue
			}
			rotx := x*ct + y*st
			roty := -x*st + y*ct
			envelope := math.Exp(-0.5 * (rotx*rotx/(g.SigmaX*g.SigmaX) + roty*roty/(g.SigmaY*g.SigmaY)))
			w[i*shape[1]+j] = envelope * math.Cos(2*math.Pi*g.Frequency*rotx+g.Offset) * scale
		}
	}
	return nd.Kernel{Shape: shape, Weights: w}
}

// checkGaborRank fails unless rank is 2.
func checkGaborRank(filter string, rank int) error {
	if rank != 2 {
		return &RankError{Filter: filter, Rank: rank, Msg: "a Gabor kernel is 2-D (rows y, columns x); choose two axes"}
	}
	return nil
}

func (g Gabor) Build(rank int) ([]Filter, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	if err := checkGaborRank("gabor", rank); err != nil {
		return nil, err
	}
	s, err := g.fit("gabor")
	if err != nil {
		return nil, err
	}
	return built(Filter{Name: g.String(), Terms: []nd.Kernel{s.kernel(s.y0, s.x0)}, Combine: Single})
}

func (b GaborBank) Build(rank int) ([]Filter, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	if err := checkGaborRank("gabor-bank", rank); err != nil {
		return nil, err
	}
	// Every kernel has at least 3×3 weights: refuse an absurd count before
	// the loop below runs over it.
	if err := checkWeights("gabor-bank", "orientations", fmt.Sprint(b.Orientations), 9*float64(b.Orientations)); err != nil {
		return nil, err
	}
	members := make([]gaborShape, b.Orientations)
	ny, nx := 0, 0
	for k := range members {
		g := b.Gabor
		g.Theta = b.Theta + float64(k)*math.Pi/float64(b.Orientations)
		s, err := g.fit("gabor-bank")
		if err != nil {
			return nil, err
		}
		members[k] = s
		ny, nx = max(ny, s.y0), max(nx, s.x0)
	}
	n := float64(b.Orientations) * float64(2*ny+1) * float64(2*nx+1)
	if err := checkWeights("gabor-bank", "orientations", fmt.Sprint(b.Orientations), n); err != nil {
		return nil, err
	}
	bank := make([]Filter, len(members))
	for k, s := range members {
		g := b.Gabor
		g.Theta = s.g.Theta
		bank[k] = Filter{Name: g.String(), Terms: []nd.Kernel{s.kernel(ny, nx)}, Combine: Single}
		if err := checkFinite(bank[k]); err != nil {
			return nil, err
		}
	}
	return bank, nil
}
