#!/usr/bin/python3
"""Write the demo's embedded samples into internal/sample/.

Run from the repository root with Debian 12's interpreter and packages
(python3-scipy, python3-skimage, python3-nibabel):

    /usr/bin/python3 scripts/make_sample.py

- astronaut.png: scikit-image's data/astronaut.png as Debian's python3-skimage
  0.19.3 ships it (/usr/lib/python3/dist-packages/skimage/data/astronaut.png),
  copied byte for byte: 512x512 RGB, the NASA portrait of astronaut Eileen
  Collins (image GPN-2000-001177). Public domain (a NASA photograph; "no known
  copyright restrictions, released into the public domain", as skimage.data
  documents).
- brain.nii.gz: the first of the two volumes in nibabel's test file
  tests/data/example4d.nii.gz, as Debian's python3-nibabel 5.0.0 ships it: a real
  128x96x24 int16 functional MRI volume of a human head, 2 x 2 x 2.2 mm voxels,
  its affine and header kept. Licence: nibabel's MIT/Expat licence (Debian's
  copyright file for python3-nibabel: "Files: *", Expat).
- ecg.npy: the first 10,800 samples (30 s at 360 Hz) of
  scipy.misc.electrocardiogram(), float32 millivolts, from the MIT-BIH
  Arrhythmia Database record 208 (Open Data Commons Attribution License v1.0,
  as scipy documents).
"""
import shutil
import warnings

import nibabel as nib
import numpy as np
import scipy.misc

warnings.simplefilter("ignore")
shutil.copyfile("/usr/lib/python3/dist-packages/skimage/data/astronaut.png",
                "internal/sample/astronaut.png")

src = nib.load("/usr/lib/python3/dist-packages/nibabel/tests/data/example4d.nii.gz")
first = np.asarray(src.dataobj[..., 0]).astype(np.int16)
hdr = src.header.copy()
hdr.set_data_dtype(np.int16)
img = nib.Nifti1Image(first, src.affine, hdr)
img.header.set_xyzt_units("mm", "sec")
nib.save(img, "internal/sample/brain.nii.gz")

np.save("internal/sample/ecg.npy", scipy.misc.electrocardiogram()[:10800].astype(np.float32))
