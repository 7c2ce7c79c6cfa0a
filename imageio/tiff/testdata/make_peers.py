#!/usr/bin/python3
"""TIFF files written by OpenCV and PIL, for TestReadPeerFiles.

Run from imageio/tiff/testdata with Debian's Python (python3-opencv 4.6,
PIL 9.4):

    /usr/bin/python3 make_peers.py

Writes peers/*.tif: 120×70 images whose samples follow peer_samples (the
Go test computes the same formula), RGB uint8 and gray uint16, LZW and
Deflate, through cv2.imwrite (OpenCV's libtiff: horizontal predictor,
strips of about 8 KiB) and PIL (its own strip layout, no predictor).
"""
import os

import cv2
import numpy as np
from PIL import Image

H, W = 120, 70


def peer_samples(channels, bits):
    y, x, c = np.meshgrid(np.arange(H), np.arange(W), np.arange(max(channels, 1)), indexing="ij")
    v = (x * 7 + y * 13 + c * 29 + (x * x * 3 + y * y * 5 + c * 11) % 17) % 256
    if bits == 16:
        v = v * 257 + (x * y) % 251
    a = v.astype(np.uint8 if bits == 8 else np.uint16)
    return a if channels else a[..., 0]


def main():
    os.makedirs("peers", exist_ok=True)
    rgb8, gray16 = peer_samples(3, 8), peer_samples(0, 16)
    for name, comp in [("lzw", 5), ("deflate", 8)]:
        cv2.imwrite(f"peers/cv2-rgb8-{name}.tif", rgb8[..., ::-1], [cv2.IMWRITE_TIFF_COMPRESSION, comp])
        cv2.imwrite(f"peers/cv2-gray16-{name}.tif", gray16, [cv2.IMWRITE_TIFF_COMPRESSION, comp])
    cv2.imwrite("peers/cv2-rgb8-default.tif", rgb8[..., ::-1])
    for name, comp in [("lzw", "tiff_lzw"), ("deflate", "tiff_adobe_deflate")]:
        Image.fromarray(rgb8).save(f"peers/pil-rgb8-{name}.tif", compression=comp)
        Image.fromarray(gray16).save(f"peers/pil-gray16-{name}.tif", compression=comp)
    for f in sorted(os.listdir("peers")):
        a = cv2.imread("peers/" + f, cv2.IMREAD_UNCHANGED)
        want = rgb8[..., ::-1] if "rgb8" in f else gray16
        assert a is not None and np.array_equal(a, want), f
        print(f, os.path.getsize("peers/" + f), "bytes")


if __name__ == "__main__":
    main()
