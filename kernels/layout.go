package kernels

import "fmt"

// PlanarLaunch is layout.cl's bank_planar for one bank output: its build
// (Defines) and grid.
type PlanarLaunch struct {
	Defines       []string
	Groups, Local [3]int
}

// planarTile and planarRows are layout.cl's PLANAR_TILE and PLANAR_ROWS.
const planarTile, planarRows = 32, 8

// BankPlanar plans moving a bank's output of voxels voxels × bank kernels
// of elemSize-byte elements from the interleaved layout the engines write
// into the planar one (package nd's ToPlanar, on the device).
func BankPlanar(voxels int64, bank, elemSize int) (PlanarLaunch, error) {
	elem := map[int]string{1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}[elemSize]
	if elem == "" {
		return PlanarLaunch{}, fmt.Errorf("kernels: no planar move for %d-byte elements", elemSize)
	}
	tiles := (voxels + planarTile - 1) / planarTile
	if voxels <= 0 || bank <= 0 || tiles > 1<<31-1 || bank > maxGridYZ*planarTile {
		return PlanarLaunch{}, fmt.Errorf("kernels: no planar move of %d voxels × %d kernels", voxels, bank)
	}
	return PlanarLaunch{
		Defines: []string{"ELEM=" + elem},
		Groups:  [3]int{int(tiles), ceilDiv(bank, planarTile), 1},
		Local:   [3]int{planarTile, planarRows, 1},
	}, nil
}
