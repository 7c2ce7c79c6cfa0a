package sample

import (
	"bytes"
	"embed"
	"fmt"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

//go:embed astronaut.png brain.nii.gz ecg.npy
var files embed.FS

// Names of the samples, which are also their file names.
const (
	Astronaut = "astronaut.png" // 512×512×3 uint8 RGB photograph
	Brain     = "brain.nii.gz"  // 128×96×24 int16 MRI volume of a head
	ECG       = "ecg.npy"       // 10,800 float32 samples of an electrocardiogram, 360 Hz
)

// Load decodes the named sample and what its file says about it.
func Load(name string) (nd.Array, imageio.Meta, error) {
	raw, err := files.ReadFile(name)
	if err != nil {
		return nd.Array{}, imageio.Meta{}, fmt.Errorf("sample %q: %w", name, err)
	}
	a, meta, err := imageio.Decode(name, bytes.NewReader(raw))
	if err != nil {
		return nd.Array{}, imageio.Meta{}, fmt.Errorf("sample %q: %w", name, err)
	}
	return a, meta, nil
}
