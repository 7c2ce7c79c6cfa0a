#!/usr/bin/python3
"""Write the demo's embedded samples into internal/sample/.

Run from the repository root with Debian's interpreter (python3-scipy):

    /usr/bin/python3 scripts/make_sample.py

- ascent.npy: scipy.misc.ascent(), 512x512 uint8, the photograph scipy ships
  (scipy's BSD-3-Clause licence; the picture is public domain, from
  public-domain-image.com, as scipy/misc documents).
- ecg.npy: the first 10,800 samples (30 s at 360 Hz) of scipy.misc.electrocardiogram(),
  float32 millivolts, from the MIT-BIH Arrhythmia Database record 208 (Open Data
  Commons Attribution License v1.0, as scipy documents).
- volume.npy: a synthetic 64^3 uint8 volume (soft spheres and noise, fixed seed),
  until a real scanner volume replaces it.
"""
import warnings

import numpy as np
import scipy.misc

warnings.simplefilter("ignore")
np.save("internal/sample/ascent.npy", scipy.misc.ascent().astype(np.uint8))
np.save("internal/sample/ecg.npy", scipy.misc.electrocardiogram()[:10800].astype(np.float32))

rng = np.random.default_rng(20261123)
z, y, x = np.mgrid[0:64, 0:64, 0:64].astype(np.float64)
vol = np.zeros((64, 64, 64))
for _ in range(12):
    c = rng.uniform(8, 56, 3)
    r = rng.uniform(4, 12)
    d = np.sqrt((z - c[0]) ** 2 + (y - c[1]) ** 2 + (x - c[2]) ** 2)
    vol += rng.uniform(60, 160) / (1 + np.exp((d - r) * 1.5))
vol += rng.normal(0, 8, vol.shape)
np.save("internal/sample/volume.npy", np.clip(vol, 0, 255).round().astype(np.uint8))
