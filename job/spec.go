package job

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/ndconv/ndconv"
	"github.com/ndconv/ndconv/filters"
	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
	"github.com/ndconv/ndconv/zarr"
	"github.com/ndconv/ndconv/zarr/blobstore"
)

// Version is the plan file's format version that this package writes and
// reads.
const Version = 1

// DefaultBlockBytes bounds a block's input (halo included) and output
// when Config gives no block shape, raised where one shard's block needs
// more. Chosen on a 1024³ float32 Zarr of 128³ chunks
// (docs/perf/streaming.md).
const DefaultBlockBytes = 128 << 20

// HashAttribute is the output array's attribute that records the hash of
// the plan that created it.
const HashAttribute = "ndconv_plan_hash"

// Spec is the versioned plan file: the input and output by path or URL,
// the filters' weights, every option, the output's layout, the block grid
// and a hash of all of it. It is a pure description: Load and Parse give
// one that any machine can Open. Its fields are read-only once Hash is
// set (New, Parse): a change makes Marshal's hash check fail.
type Spec struct {
	Version int `json:"version"`
	// Op is "correlate" or "convolve".
	Op string `json:"op"`
	// Input is a Zarr array (a path, or a URL of package blobstore) or a
	// local .npy or .raw file; Output a Zarr array. A relative path is
	// taken from the working directory of whoever opens the plan (give
	// URLs, or absolute paths on a shared file system, to workers).
	Input  string `json:"input"`
	Output string `json:"output"`
	// InputShape and InputDType are the input's, checked by Open; they
	// give a .raw input's geometry.
	InputShape []int  `json:"input_shape"`
	InputDType string `json:"input_dtype"`
	// Filters are the kernels of the bank, in order, with their weights:
	// a named filter is stored as the kernel it built, so that a worker
	// computes what the planner planned whatever version it runs.
	Filters []Filter `json:"filters"`
	Options Options  `json:"options"`
	// OutputShape (with a bank axis when there are several filters: last,
	// or first where Options.BankLayout is planar) and OutputDType are the
	// output array's; Shards is the shape of what it stores under one key
	// (its shards, or chunks).
	OutputShape []int  `json:"output_shape"`
	OutputDType string `json:"output_dtype"`
	Shards      []int  `json:"shards"`
	// Block is a block's output extent per axis (without the bank axis),
	// a multiple of Shards; Grid the blocks per axis. Block i is the i-th
	// of the grid in C order.
	Block []int `json:"block"`
	Grid  []int `json:"grid"`
	// Hash is "sha256:" and the hex digest of the plan marshalled with
	// Hash empty.
	Hash string `json:"hash"`

	plan *ndconv.FilterPlan // New's plan, taken by the first Open
}

// Filter is one kernel of the bank.
type Filter struct {
	Name    string      `json:"name"`
	Shape   []int       `json:"shape"`
	Weights []float64   `json:"weights,omitempty"`
	Imag    []float64   `json:"imag,omitempty"`
	Factors [][]float64 `json:"factors,omitempty"`
}

// Options are ndconv.Options as text. Method is the method the planner
// chose (never auto), so that every worker runs it; CVal and CValImag
// are numbers as strconv writes them (NaN and ±Inf included).
type Options struct {
	Border       string `json:"border"`
	CVal         string `json:"cval"`
	CValImag     string `json:"cval_imag"`
	Origin       []int  `json:"origin,omitempty"`
	Mode         string `json:"mode"`
	Axes         []int  `json:"axes,omitempty"`
	DType        string `json:"dtype,omitempty"`
	Device       string `json:"device"`
	Method       string `json:"method"`
	Exact        bool   `json:"exact,omitempty"`
	Workers      int    `json:"workers,omitempty"`
	DeviceMemory int64  `json:"device_memory,omitempty"`
	// BankLayout is "planar" where a bank's axis comes first, else "".
	BankLayout string `json:"bank_layout,omitempty"`
}

// Config is what New plans.
type Config struct {
	Op            ndconv.Operation
	Input, Output string
	// Raw gives a .raw input's shape and dtype.
	Raw imageio.RawOptions
	// Filters returns the filters for an input whose kernels span rank
	// axes (len(Options.Axes), else the input's rank): filters of one term
	// each (kernels, gaussian, uniform, …).
	Filters func(rank int) ([]filters.Filter, error)
	// Options as for ndconv.NewFilterPlan; Progress, when set, receives
	// the blocks of the first Runner that Open makes.
	Options ndconv.Options
	// Block is a block's output extent per axis, a multiple of the
	// output's shards; nil chooses the largest blocks within BlockBytes
	// (0: DefaultBlockBytes) made of whole shards.
	Block      []int
	BlockBytes int64
}

// ErrNotBlockable is New's error for a job that cannot run in blocks: an
// input that cannot be mapped (a .npy or .raw file not in the machine's
// byte order) or filters of several terms.
var ErrNotBlockable = errors.New("job: the job cannot run in blocks")

// PlanError is a plan file that cannot be read: malformed, of another
// version, or edited since its hash was made.
type PlanError struct{ Msg string }

func (e *PlanError) Error() string { return "job: plan: " + e.Msg }

// MismatchError is an output array that another plan (or no plan)
// created.
type MismatchError struct {
	Output     string
	Have, Want string // the hash recorded ("" for none) and the plan's
}

func (e *MismatchError) Error() string {
	have := "no plan hash"
	if e.Have != "" {
		have = "plan " + e.Have
	}
	return fmt.Sprintf("job: output %s was created by %s, not by this plan (%s): remove it, or give the plan that created it", e.Output, have, e.Want)
}

// New plans cfg: it reads the input's metadata, plans the filters (the
// method chosen is recorded), lays out the output and its block grid, and
// hashes the lot. Nothing is written (Create writes the output's
// metadata). A job that cannot run in blocks is ErrNotBlockable.
func New(ctx context.Context, cfg Config) (*Spec, error) {
	if cfg.Filters == nil {
		return nil, &nd.ArgumentError{Arg: "filters", Msg: "no filters given"}
	}
	if !imageio.IsZarr(cfg.Output) {
		return nil, &nd.ArgumentError{Arg: "output", Msg: fmt.Sprintf("%s is not a Zarr array (x.zarr, or x.zarr/group/array)", cfg.Output)}
	}
	in, err := openInput(ctx, cfg.Input, cfg.Raw)
	if err != nil {
		return nil, err
	}
	defer in.close()
	opt := cfg.Options
	rank := len(in.shape)
	if len(opt.Axes) > 0 {
		rank = len(opt.Axes)
	}
	fs, err := cfg.Filters(rank)
	if err != nil {
		return nil, err
	}
	s := &Spec{Version: Version, Op: cfg.Op.String(), Input: cfg.Input, Output: cfg.Output,
		InputShape: slices.Clone(in.shape), InputDType: in.dtype.String()}
	for _, f := range fs {
		if len(f.Terms) != 1 || f.Combine != filters.Single {
			return nil, ErrNotBlockable
		}
		k := f.Terms[0]
		s.Filters = append(s.Filters, Filter{Name: f.Name, Shape: slices.Clone(k.Shape),
			Weights: slices.Clone(k.Weights), Imag: slices.Clone(k.Imag), Factors: k.Factors})
		for _, w := range [][]float64{k.Weights, k.Imag, slices.Concat(k.Factors...)} {
			if slices.ContainsFunc(w, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }) {
				return nil, &nd.ArgumentError{Arg: "filters", Msg: fmt.Sprintf("filter %s has a weight that is not finite", f.Name)}
			}
		}
	}
	p, err := ndconv.NewFilterPlan(cfg.Op, in.shape, in.dtype, opt, fs...)
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if !keep {
			p.Close()
		}
	}()
	if !p.Blocked() {
		return nil, ErrNotBlockable
	}
	s.Options = Options{Border: opt.Border.String(), CVal: formatFloat(opt.CVal), CValImag: formatFloat(opt.CValImag),
		Origin: slices.Clone(opt.Origin), Mode: opt.Mode.String(), Axes: slices.Clone(opt.Axes),
		Device: opt.Device, Method: p.Method(), Exact: opt.Exact, Workers: opt.Workers, DeviceMemory: opt.DeviceMemory}
	if s.Options.Device == "" {
		s.Options.Device = "auto"
	}
	if opt.DType != nd.Unspecified {
		s.Options.DType = opt.DType.String()
	}
	if opt.BankLayout == ndconv.Planar && len(fs) > 1 {
		s.Options.BankLayout = ndconv.Planar.String()
	}
	s.OutputShape, s.OutputDType = p.Shape(), p.DType().String()
	layout := imageio.ZarrLayout(s.OutputShape, p.DType(), in.meta)
	s.Shards = imageio.ZarrShardShape(layout)
	if s.Block, err = chooseBlock(p, cfg, s.blockAxes(s.Shards), s.blockAxes(s.OutputShape)); err != nil {
		return nil, err
	}
	for d, n := range s.blockAxes(s.OutputShape) {
		s.Grid = append(s.Grid, (n+s.Block[d]-1)/s.Block[d])
	}
	if s.Hash, err = s.hash(); err != nil {
		return nil, err
	}
	keep = true
	s.plan = p
	return s, nil
}

// chooseBlock is cfg's block shape, checked against the shards, or the
// largest blocks of whole shards within the budget (doubled where one
// shard's block does not fit it).
func chooseBlock(p *ndconv.FilterPlan, cfg Config, shards, shape []int) ([]int, error) {
	if cfg.Block != nil {
		if len(cfg.Block) != len(shards) {
			return nil, &nd.ArgumentError{Arg: "block", Msg: fmt.Sprintf("%v has %d axes; the output has %d (without a bank axis)", cfg.Block, len(cfg.Block), len(shards))}
		}
		for d, n := range cfg.Block {
			if n < 1 || n%shards[d] != 0 && n < shape[d] {
				return nil, &nd.ArgumentError{Arg: "block", Msg: fmt.Sprintf("%v: axis %d's extent %d is not a positive multiple of the output's shards %v (nor the whole axis, %d)", cfg.Block, d, n, shards, shape[d])}
			}
		}
		g, err := p.Grid(ndconv.BlockOptions{Shape: cfg.Block})
		if err != nil {
			return nil, err
		}
		return g.Shape(), nil
	}
	budget := cfg.BlockBytes
	if budget <= 0 {
		budget = DefaultBlockBytes
	}
	var err error
	for range 48 {
		if _, err = p.Grid(ndconv.BlockOptions{Bytes: budget}); err == nil {
			var g interface{ Shape() []int }
			if g, err = p.Grid(ndconv.BlockOptions{Bytes: budget, Align: shards}); err == nil {
				return g.Shape(), nil
			}
		}
		budget *= 2
	}
	return nil, err
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// hash is the digest of the plan marshalled with Hash empty.
func (s *Spec) hash() (string, error) {
	c := *s
	c.Hash, c.plan = "", nil
	b, err := json.Marshal(&c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Marshal writes the plan as indented JSON.
func (s *Spec) Marshal() ([]byte, error) {
	h, err := s.hash()
	if err != nil {
		return nil, err
	}
	if h != s.Hash {
		return nil, &PlanError{Msg: fmt.Sprintf("its fields changed after it was hashed (%s, now %s)", s.Hash, h)}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Parse reads a plan file, checking its version, its hash and its
// options.
func Parse(data []byte) (*Spec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, &PlanError{Msg: "not a plan file: " + err.Error()}
	}
	if dec.More() {
		return nil, &PlanError{Msg: "not a plan file: more after the plan's JSON object"}
	}
	if s.Version != Version {
		return nil, &PlanError{Msg: fmt.Sprintf("version %d; this ndconv reads version %d (plan again with this ndconv)", s.Version, Version)}
	}
	h, err := s.hash()
	if err != nil {
		return nil, err
	}
	if s.Hash != h {
		return nil, &PlanError{Msg: fmt.Sprintf("its hash %q is not its contents' (%s): the file was edited or cut short; plan again", s.Hash, h)}
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

// check validates what Parse read beyond its JSON: every option parses,
// the shapes agree.
func (s *Spec) check() error {
	if _, err := s.op(); err != nil {
		return err
	}
	if _, err := s.options(); err != nil {
		return err
	}
	if _, err := s.filters(); err != nil {
		return err
	}
	if _, err := nd.ParseDType(s.InputDType); err != nil {
		return &PlanError{Msg: "input_dtype: " + err.Error()}
	}
	if _, err := nd.ParseDType(s.OutputDType); err != nil {
		return &PlanError{Msg: "output_dtype: " + err.Error()}
	}
	rank := len(s.Block)
	if rank == 0 || len(s.Grid) != rank || len(s.InputShape) != rank || len(s.OutputShape) < rank || len(s.OutputShape) > rank+1 || len(s.Shards) != len(s.OutputShape) ||
		s.Options.BankLayout != "" && len(s.OutputShape) != rank+1 {
		return &PlanError{Msg: fmt.Sprintf("block %v, grid %v, output %v and shards %v do not agree", s.Block, s.Grid, s.OutputShape, s.Shards)}
	}
	shards, out := s.blockAxes(s.Shards), s.blockAxes(s.OutputShape)
	for d := range rank {
		if s.Block[d] < 1 || shards[d] < 1 || s.Grid[d] != (out[d]+s.Block[d]-1)/s.Block[d] {
			return &PlanError{Msg: fmt.Sprintf("block %v, grid %v and output %v do not agree", s.Block, s.Grid, s.OutputShape)}
		}
	}
	if !imageio.IsZarr(s.Output) {
		return &PlanError{Msg: fmt.Sprintf("output %s is not a Zarr array", s.Output)}
	}
	return nil
}

func (s *Spec) op() (ndconv.Operation, error) {
	switch s.Op {
	case ndconv.Correlation.String():
		return ndconv.Correlation, nil
	case ndconv.Convolution.String():
		return ndconv.Convolution, nil
	}
	return 0, &PlanError{Msg: fmt.Sprintf("op %q is neither correlate nor convolve", s.Op)}
}

// options are the plan's ndconv.Options.
func (s *Spec) options() (ndconv.Options, error) {
	o := s.Options
	var opt ndconv.Options
	var err error
	bad := func(field string, err error) (ndconv.Options, error) {
		return ndconv.Options{}, &PlanError{Msg: field + ": " + err.Error()}
	}
	if opt.Border, err = nd.ParseBorder(o.Border); err != nil {
		return bad("border", err)
	}
	if opt.Mode, err = nd.ParseMode(o.Mode); err != nil {
		return bad("mode", err)
	}
	if opt.CVal, err = strconv.ParseFloat(o.CVal, 64); err != nil {
		return bad("cval", err)
	}
	if opt.CValImag, err = strconv.ParseFloat(o.CValImag, 64); err != nil {
		return bad("cval_imag", err)
	}
	if o.DType != "" {
		if opt.DType, err = nd.ParseDType(o.DType); err != nil {
			return bad("dtype", err)
		}
	}
	i := slices.IndexFunc([]ndconv.Method{ndconv.Direct, ndconv.Separable, ndconv.FFT}, func(m ndconv.Method) bool { return m.String() == o.Method })
	if i < 0 {
		return bad("method", fmt.Errorf("%q is none of direct, separable, fft", o.Method))
	}
	opt.Method = []ndconv.Method{ndconv.Direct, ndconv.Separable, ndconv.FFT}[i]
	opt.Origin, opt.Axes = slices.Clone(o.Origin), slices.Clone(o.Axes)
	opt.Device, opt.Exact, opt.Workers, opt.DeviceMemory = o.Device, o.Exact, o.Workers, o.DeviceMemory
	if o.BankLayout != "" {
		if opt.BankLayout, err = ndconv.ParseBankLayout(o.BankLayout); err != nil || opt.BankLayout != ndconv.Planar {
			return bad("bank_layout", fmt.Errorf("%q is not planar (an interleaved bank is the default, written as none)", o.BankLayout))
		}
	}
	return opt, nil
}

// filters are the plan's filters, as NewFilterPlan takes them.
func (s *Spec) filters() ([]filters.Filter, error) {
	if len(s.Filters) == 0 {
		return nil, &PlanError{Msg: "no filters"}
	}
	var fs []filters.Filter
	for _, f := range s.Filters {
		k := ndconv.Kernel{Shape: slices.Clone(f.Shape), Weights: slices.Clone(f.Weights), Imag: slices.Clone(f.Imag), Factors: f.Factors}
		fs = append(fs, ndconv.KernelFilter(f.Name, k))
	}
	return fs, nil
}

// Close releases the filter plan New made, where no Open took it.
func (s *Spec) Close() error {
	if s.plan == nil {
		return nil
	}
	err := s.plan.Close()
	s.plan = nil
	return err
}

// BlockBytes is about what one block holds in memory: its input with
// the halo, and its output.
func (s *Spec) BlockBytes() int64 {
	in, _ := nd.ParseDType(s.InputDType)
	out, _ := nd.ParseDType(s.OutputDType)
	opt, _ := s.options()
	h := halo(s.Filters, opt.Origin)
	box, outLen := int64(1), int64(1)
	for d, n := range s.Block {
		box *= int64(min(n+2*h, s.InputShape[d]+2*h))
		outLen *= int64(n)
	}
	if b := s.bankAxis(); b >= 0 {
		outLen *= int64(s.OutputShape[b])
	}
	return box*int64(in.Size()) + outLen*int64(out.Size())
}

// Blocks is the number of blocks in the grid.
func (s *Spec) Blocks() int { return prod(s.Grid) }

// Box is the output box of block i: its start and shape, the bank axis
// (when there is one) whole.
func (s *Spec) Box(i int) (start, shape []int) {
	rank := len(s.Block)
	start, shape = make([]int, len(s.OutputShape)), slices.Clone(s.OutputShape)
	bs, bshape := s.blockAxes(start), s.blockAxes(shape)
	for d, r := rank-1, i; d >= 0; d-- {
		bs[d] = r % s.Grid[d] * s.Block[d]
		r /= s.Grid[d]
		bshape[d] = min(s.Block[d], bshape[d]-bs[d])
	}
	return start, shape
}

// bankAxis is the output's bank axis: first where the bank is planar,
// last where the output has one more axis than the input, else -1.
func (s *Spec) bankAxis() int {
	switch {
	case len(s.OutputShape) == len(s.InputShape):
		return -1
	case s.Options.BankLayout != "":
		return 0
	}
	return len(s.OutputShape) - 1
}

// blockAxes is the part of v, a value per output axis, over the axes
// the blocks split (every axis but the bank's), sharing v's memory.
func (s *Spec) blockAxes(v []int) []int {
	if s.bankAxis() == 0 {
		return v[1:]
	}
	return v[:len(s.InputShape)]
}

// IsURL reports whether loc is a bucket URL that Load, Save and the
// Zarr paths take (s3://, gs://, az://, file://) rather than a local
// path.
func IsURL(loc string) bool { return blobstore.IsURL(loc) }

// Load reads a plan file from a local path or a URL of package blobstore
// (s3://bucket/dir/plan.json?endpoint=…, gs://, az://, file://).
func Load(ctx context.Context, loc string) (*Spec, error) {
	var data []byte
	var err error
	if blobstore.IsURL(loc) {
		data, err = getURL(ctx, loc)
	} else {
		data, err = os.ReadFile(loc)
	}
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", loc, err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", loc, err)
	}
	return s, nil
}

// Save writes the plan to a local path or a URL, as Load reads it (a
// local file is written beside its name and renamed, so that a reader
// never sees half of it).
func (s *Spec) Save(ctx context.Context, loc string) error {
	data, err := s.Marshal()
	if err != nil {
		return err
	}
	if blobstore.IsURL(loc) {
		st, name, err := openParent(ctx, loc)
		if err != nil {
			return err
		}
		return errors.Join(st.Put(ctx, name, data), st.Close())
	}
	tmp := loc + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, loc)
}

// openParent opens the store of the folder above an object's URL and
// returns the object's name in it.
func openParent(ctx context.Context, loc string) (*blobstore.Store, string, error) {
	u, err := url.Parse(loc)
	if err != nil {
		return nil, "", &nd.ArgumentError{Arg: "url", Msg: err.Error()}
	}
	dir, name := path.Split(strings.TrimSuffix(u.Path, "/"))
	if name == "" {
		return nil, "", &nd.ArgumentError{Arg: "url", Msg: fmt.Sprintf("%s names no object", loc)}
	}
	u.Path = strings.TrimSuffix(dir, "/")
	if u.Path == "" {
		u.Path = "/"
	}
	st, err := blobstore.Open(ctx, u.String(), nil)
	if err != nil {
		return nil, "", err
	}
	return st, name, nil
}

func getURL(ctx context.Context, loc string) ([]byte, error) {
	st, name, err := openParent(ctx, loc)
	if err != nil {
		return nil, err
	}
	data, err := st.Get(ctx, name)
	return data, errors.Join(err, st.Close())
}

// input is a job's input opened: a Zarr array, or a mapped file.
type input struct {
	shape  []int
	dtype  nd.DType
	meta   imageio.Meta
	zarr   *zarr.Array
	mapped *imageio.MappedArray
}

func (in *input) close() {
	if in.mapped != nil {
		in.mapped.Close()
	}
}

// openInput opens a Zarr array, or maps a .npy or .raw file.
func openInput(ctx context.Context, loc string, raw imageio.RawOptions) (*input, error) {
	if imageio.IsZarr(loc) {
		a, m, err := imageio.OpenZarr(ctx, loc)
		if err != nil {
			return nil, err
		}
		return &input{shape: a.Shape(), dtype: a.DType(), meta: m, zarr: a}, nil
	}
	ext := strings.ToLower(path.Ext(loc))
	if ext != ".npy" && ext != ".raw" {
		return nil, &nd.ArgumentError{Arg: "input", Msg: fmt.Sprintf("%s is neither a Zarr array nor a .npy or .raw file", loc)}
	}
	m, err := imageio.MapFile(loc, raw)
	if errors.Is(err, imageio.ErrNotMappable) {
		return nil, ErrNotBlockable
	}
	if err != nil {
		return nil, err
	}
	return &input{shape: slices.Clone(m.Shape), dtype: m.DType(), mapped: m}, nil
}
