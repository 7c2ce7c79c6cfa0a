package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/ndconv/ndconv/internal/gpucache"
	"github.com/ndconv/ndconv/kernels"
	"github.com/ndconv/ndconv/nd"
)

// TuningCache remembers, per device and problem, the kernel work
// decomposition `ndconv tune` measured fastest — FFTW's wisdom for
// ndconv's GPU kernels. Plans read it; a problem it does not know gets the
// kernels' own choice. The tuning changes only how the work is spread over
// the GPU, never the order of operations: results stay bit-identical.
type TuningCache struct {
	path string

	mu      sync.Mutex
	entries map[string]kernels.Tuning
	cpu     *CPURates
	gpus    map[string]GPURates
}

// tuningFile is the cache's JSON form. CPU and GPUs, the machine's rates
// for auto's device choice (cost.go), came later: a file without them is
// read as one with none measured.
type tuningFile struct {
	Version int                       `json:"version"`
	Entries map[string]kernels.Tuning `json:"entries"`
	CPU     *CPURates                 `json:"cpu,omitempty"`
	GPUs    map[string]GPURates       `json:"gpus,omitempty"` // by device identity (TuningKey's)
}

const tuningVersion = 1

// DefaultTuningPath is where plans look for the tuning cache:
// $NDCONV_TUNING, else tuning.json in ndconv's user cache directory
// (gpucache.UserDir).
func DefaultTuningPath() string {
	if p := os.Getenv("NDCONV_TUNING"); p != "" {
		return p
	}
	dir, err := gpucache.UserDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "tuning.json")
}

// OpenTuningCache reads the cache at path; a missing file is an empty
// cache, a damaged one an error (say which file).
func OpenTuningCache(path string) (*TuningCache, error) {
	c := &TuningCache{path: path, entries: map[string]kernels.Tuning{}, gpus: map[string]GPURates{}}
	if path == "" {
		return c, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("plan: tuning cache: %w", err)
	}
	var f tuningFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("plan: tuning cache %s: %w", path, err)
	}
	if f.Version == tuningVersion && f.Entries != nil {
		c.entries = f.Entries
	}
	if f.Version == tuningVersion {
		c.cpu = f.CPU
		if f.GPUs != nil {
			c.gpus = f.GPUs
		}
	}
	return c, nil
}

// Lookup returns the tuning stored for p run by method m on device dev.
func (c *TuningCache) Lookup(dev Device, p *nd.Problem, m Method) (kernels.Tuning, bool) {
	if c.Len() == 0 {
		return kernels.Tuning{}, false // no device query for an empty cache
	}
	key, ok := TuningKey(dev, p, m)
	if !ok {
		return kernels.Tuning{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.entries[key]
	return t, ok
}

// Store records t for p run by m on dev (Save writes it out).
func (c *TuningCache) Store(dev Device, p *nd.Problem, m Method, t kernels.Tuning) error {
	key, ok := TuningKey(dev, p, m)
	if !ok {
		return fmt.Errorf("plan: tuning cache: device %v cannot be identified", dev)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[key] = t
	return nil
}

// CPURates returns the CPU rates stored (StoreCPURates).
func (c *TuningCache) CPURates() (CPURates, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cpu == nil {
		return CPURates{}, false
	}
	return *c.cpu, true
}

// StoreCPURates records this machine's CPU rates (Save writes them out).
func (c *TuningCache) StoreCPURates(r CPURates) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cpu = &r
}

// GPURates returns the rates stored for dev (StoreGPURates).
func (c *TuningCache) GPURates(dev Device) (GPURates, bool) {
	c.mu.Lock()
	n := len(c.gpus)
	c.mu.Unlock()
	if n == 0 {
		return GPURates{}, false // no device query for an empty cache
	}
	id, ok := deviceIdentity(dev)
	if !ok {
		return GPURates{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.gpus[id]
	return r, ok
}

// StoreGPURates records dev's rates (Save writes them out).
func (c *TuningCache) StoreGPURates(dev Device, r GPURates) error {
	id, ok := deviceIdentity(dev)
	if !ok {
		return fmt.Errorf("plan: tuning cache: device %v cannot be identified", dev)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gpus[id] = r
	return nil
}

// allGPURates is every GPU's rates stored.
func (c *TuningCache) allGPURates() []GPURates {
	c.mu.Lock()
	defer c.mu.Unlock()
	var rs []GPURates
	for _, r := range c.gpus {
		rs = append(rs, r)
	}
	return rs
}

// Len is the number of entries.
func (c *TuningCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Save writes the cache to its file through a temporary file and a rename,
// so that a reader never sees half of it.
func (c *TuningCache) Save() error {
	c.mu.Lock()
	b, err := json.MarshalIndent(tuningFile{Version: tuningVersion, Entries: c.entries, CPU: c.cpu, GPUs: c.gpus}, "", "\t")
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return fmt.Errorf("plan: tuning cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".tuning-*")
	if err != nil {
		return fmt.Errorf("plan: tuning cache: %w", err)
	}
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("plan: tuning cache: %w", err)
	}
	return nil
}

// TuningKey names a problem on a device for the cache: the device's model
// and driver (a new driver may want other choices), the method, and what
// shapes the work — dtypes, shapes, kernel extents, bank, border and
// shifts. It reports false for a device it cannot identify.
func TuningKey(dev Device, p *nd.Problem, m Method) (string, bool) {
	id, ok := deviceIdentity(dev)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%s|%v|%v>%v|in%v|out%v|k%v|bank%d|%v|shift%v", id, m, p.In, p.Out,
		p.InShape, p.OutShape, p.KShape, len(p.Kernels), p.Border, p.Shift), true
}

// deviceIdentity is a GPU's model, architecture and driver, asked of the
// driver without a context (its backend's Identity).
func deviceIdentity(dev Device) (string, bool) {
	b, ok := dev.Backend()
	if !ok {
		return "", false
	}
	return b.Identity(dev)
}

// defaultTuning is the cache plans read, opened once per process; a
// damaged file is ignored (plans then use the kernels' own choices).
var defaultTuning = sync.OnceValue(func() *TuningCache {
	c, err := OpenTuningCache(DefaultTuningPath())
	if err != nil {
		c, _ = OpenTuningCache("")
	}
	return c
})

// machineRates are the rates auto's estimates use: the tuning cache's where
// measured, else the defaults (cost.go). A nil cache has none measured.
type machineRates struct{ cache *TuningCache }

// ratesFor is the rates the options let a plan read.
func ratesFor(opt Options) machineRates {
	if opt.NoTuningCache {
		return machineRates{}
	}
	if opt.TuningCache != nil {
		return machineRates{opt.TuningCache}
	}
	return machineRates{defaultTuning()}
}

func (m machineRates) cpu() CPURates {
	if m.cache != nil {
		if r, ok := m.cache.CPURates(); ok && r.MaddsPerSecond > 0 && r.Cores > 0 {
			if r.TouchBytesPerSecond <= 0 {
				r.TouchBytesPerSecond = defaultTouchBytesPerSecond
			}
			return r
		}
	}
	return DefaultCPURates()
}

func (m machineRates) gpu(dev Device) GPURates {
	var r GPURates
	if m.cache != nil {
		r, _ = m.cache.GPURates(dev)
	}
	return r.orDefault(DefaultGPURates)
}

// allGPUs is the defaults and every GPU's measured rates.
func (m machineRates) allGPUs() []GPURates {
	rs := []GPURates{DefaultGPURates}
	if m.cache != nil {
		for _, r := range m.cache.allGPURates() {
			rs = append(rs, r.orDefault(DefaultGPURates))
		}
	}
	return rs
}
