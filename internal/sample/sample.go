package sample

import (
	"bytes"
	"embed"
	"fmt"
	"io"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

//go:embed astronaut.png brain.nii.gz ecg.npy
var files embed.FS

// Names of the samples.
const (
	Astronaut = "astronaut.png" // 512×512×3 uint8 RGB photograph
	Brain     = "brain.nii.gz"  // 128×96×24 int16 MRI volume of a head
	ECG       = "ecg.npy"       // 10,800 float32 samples of an electrocardiogram, 360 Hz
)

// Load decodes the named sample.
func Load(name string) (nd.Array, error) {
	raw, err := files.ReadFile(name)
	if err != nil {
		return nd.Array{}, fmt.Errorf("sample %q: %w", name, err)
	}
	var read func(io.Reader) (nd.Array, error)
	switch name {
	case Astronaut:
		read = imageio.ReadPNG
	case ECG:
		read = imageio.ReadNPY
	default:
		return nd.Array{}, fmt.Errorf("sample %q: no reader", name)
	}
	a, err := read(bytes.NewReader(raw))
	if err != nil {
		return nd.Array{}, fmt.Errorf("sample %q: %w", name, err)
	}
	return a, nil
}
