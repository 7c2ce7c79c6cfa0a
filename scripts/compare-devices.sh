#!/bin/bash
# compare-devices.sh: runs every command-line example of the README with
# --device cpu and with another device (cuda by default) and compares the
# output files byte for byte. ndconv promises the same bits on every
# device: its CPU and GPU engines add the same products in the same order.
#
#   NDCONV=path/to/ndconv bash scripts/compare-devices.sh [device]
#
# Needs python3 with numpy and tifffile to make the example inputs (the
# photo and the brain are ndconv's embedded samples). Exit status 1 when
# any pair differs.
set -u
ndconv=${NDCONV:-ndconv}
device=${1:-cuda}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

cp "$here/internal/sample/astronaut.png" photo.png
cp "$here/internal/sample/brain.nii.gz" brain.nii.gz
python3 - <<'PY' || exit 1
import numpy as np, tifffile
from PIL import Image
rng = np.random.default_rng(7)
np.save("photo.npy", np.asarray(Image.open("photo.png")))
np.savetxt("sobel.csv", [[1, 0, -1], [2, 0, -2], [1, 0, -1]], delimiter=",")
g = np.array([1, 2, 1.0])
d = np.array([1, 0, -1.0])
np.save("dz.npy", np.einsum("i,j,k->ijk", d, g, g))
np.save("dy.npy", np.einsum("i,j,k->ijk", g, d, g))
np.save("dx.npy", np.einsum("i,j,k->ijk", g, g, d))
tifffile.imwrite("ct.tif", (rng.random((40, 96, 128)) * 4000).astype(np.uint16))
np.save("signal.npy", np.sin(np.arange(5000) / 50).astype(np.float32) + rng.random(5000, dtype=np.float32) * 0.1)
np.savetxt("k.csv", rng.random((5, 5)), delimiter=",")
(rng.random((512, 512)) * 60000).astype(np.uint16).tofile("scan.raw")
np.savetxt("taps.csv", rng.random((1, 4)), delimiter=",")
np.save("in.npy", rng.random((64, 80)).astype(np.float32) * 100)
PY
echo "0.25, 0.5, 0.25" > smooth.csv

examples=(
	"correlate -k gaussian:sigma=2 photo.png blurred.png"
	"correlate -k sobel:axis=0 --dtype float32 photo.png dy.tif"
	"correlate -k log:sigma=1.5 --border nearest brain.nii.gz log.nii.gz"
	"correlate -k gabor:frequency=0.2 --gabor-bank 8 photo.png gabor.npy"
	"correlate -k sobel.csv --border nearest photo.npy edges.npy"
	"correlate -k dz.npy -k dy.npy -k dx.npy --mode valid --dtype float32 ct.tif grad.npy"
	"convolve -k smooth.csv --border wrap signal.npy smooth.npy"
	"correlate -k k.csv --shape 512,512 --input-dtype uint16 scan.raw out.raw"
	"correlate -k taps.csv --axes 1 --origin -1 --border constant --cval 10 in.npy out.npy"
)
status=0
for example in "${examples[@]}"; do
	read -ra args <<<"$example"
	output=${args[-1]}
	unset 'args[-1]'
	for dev in cpu "$device"; do
		if ! "$ndconv" "${args[@]}" --quiet --device "$dev" "$dev-$output"; then
			echo "FAILED on $dev: ndconv $example"
			status=1
			continue 2
		fi
	done
	if cmp -s "cpu-$output" "$device-$output"; then
		echo "same file   ndconv $example"
	else
		echo "DIFFERENT   ndconv $example"
		status=1
	fi
done
exit $status
