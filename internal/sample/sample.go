package sample

import (
	"bytes"
	"embed"
	"fmt"

	"github.com/ndconv/ndconv/imageio"
	"github.com/ndconv/ndconv/nd"
)

//go:embed *.npy
var files embed.FS

// Names of the samples.
const (
	Ascent = "ascent" // 512×512 uint8 photograph
	ECG    = "ecg"    // 10,800 float32 samples of an electrocardiogram, 360 Hz
	Volume = "volume" // 64×64×64 uint8 synthetic volume
)

// Load decodes the named sample.
func Load(name string) (nd.Array, error) {
	raw, err := files.ReadFile(name + ".npy")
	if err != nil {
		return nd.Array{}, fmt.Errorf("sample %q: %w", name, err)
	}
	return imageio.ReadNPY(bytes.NewReader(raw))
}
