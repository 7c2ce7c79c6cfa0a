#!/usr/bin/python3
"""Write gaussian1d.json: scipy.ndimage's order-0 Gaussian weights.

Run from the repository root with Debian's python3-scipy:
    /usr/bin/python3 filters/testdata/make_gaussian.py
"""
import json

import scipy
from scipy.ndimage._filters import _gaussian_kernel1d

cases = []
for sigma, truncate in [(0.3, 4.0), (1.0, 4.0), (2.0, 4.0), (0.7, 3.0), (3.3, 2.5), (10.0, 4.0)]:
    radius = int(truncate * sigma + 0.5)
    cases.append({"sigma": sigma, "truncate": truncate,
                  "weights": [float(v) for v in _gaussian_kernel1d(sigma, 0, radius)]})
with open("filters/testdata/gaussian1d.json", "w") as f:
    json.dump({"scipy": scipy.__version__, "cases": cases}, f, indent=1)
