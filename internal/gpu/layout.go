package gpu

import "github.com/ndconv/ndconv/kernels"

// ToPlanar moves src, a bank's output as the engines write it (voxels ×
// bank of elemSize-byte elements), into dst in the planar layout (bank ×
// voxels: nd.ToPlanar on the device) on q, and waits for it.
func ToPlanar(dev Device, q Queue, dst, src Buffer, voxels int64, bank, elemSize int) error {
	l, err := kernels.BankPlanar(voxels, bank, elemSize)
	if err != nil {
		return err
	}
	k, err := dev.Kernel("layout", l.Defines, "bank_planar")
	if err != nil {
		return err
	}
	if err := q.Launch(k, l.Groups, l.Local, src, dst, voxels, int32(bank)); err != nil {
		return err
	}
	return q.Finish()
}
