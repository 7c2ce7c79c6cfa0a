// layout.cl: moving a filter bank's output between layouts on the device.
// The engines write a bank interleaved, kernel fastest (out[voxel·bank +
// k]); bank_planar moves it into the planar layout, a plane per kernel
// (out[k·voxels + voxel]), as package nd's ToPlanar does on the host: the
// same values, moved, never computed. It needs none of common.cl.
//
// Defines: ELEM, the element as an unsigned integer of its size (uchar,
// ushort, uint or ulong: only the bits move).
//
// A work-group of (PLANAR_TILE, PLANAR_ROWS) work-items moves a tile of
// PLANAR_TILE voxels × PLANAR_TILE kernels through local memory: it reads
// the tile's voxels a run of kernels at a time and writes its kernels a
// run of voxels at a time, so both sides are read and written in whole
// lines where the bank allows (a tile's row holds min(bank, PLANAR_TILE)
// kernels). Grid: x over the voxels' tiles, y over the kernels'.

#define PLANAR_TILE 32
#define PLANAR_ROWS 8

__kernel void bank_planar(__global const ELEM* restrict in, __global ELEM* restrict out, const long voxels, const int bank)
{
	// One more column than the tile's: a column of the tile read in the
	// second phase spreads over the local memory's banks.
	__local ELEM tile[PLANAR_TILE][PLANAR_TILE + 1];
	const int lx = get_local_id(0), ly = get_local_id(1);
	const long v0 = (long)get_group_id(0) * PLANAR_TILE;
	const int k0 = (int)get_group_id(1) * PLANAR_TILE;
	for (int r = ly; r < PLANAR_TILE; r += PLANAR_ROWS) {
		const long v = v0 + r;
		const int k = k0 + lx;
		if (v < voxels && k < bank) {
			tile[r][lx] = in[v * bank + k];
		}
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int r = ly; r < PLANAR_TILE; r += PLANAR_ROWS) {
		const int k = k0 + r;
		const long v = v0 + lx;
		if (v < voxels && k < bank) {
			out[(long)k * voxels + v] = tile[lx][r];
		}
	}
}
