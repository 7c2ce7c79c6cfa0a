#!/usr/bin/python3
"""Fixtures for imageio's PNG and JPEG readers and writers.

Run from the repository root with Debian's python3-numpy and python3-pil:

    /usr/bin/python3 imageio/testdata/png/make_png.py

1. in_*.png: PNGs of every colour type and bit depth, written by the small
   encoder below (struct + zlib, no filtering tricks: obviously correct), each
   beside in_*.npy, the samples the reader must return.
2. photo.jpg / gray.jpg: JPEGs written by PIL, beside PIL's decoding of them
   (*.jpg.npy); decoders may differ by a few levels (IDCT rounding).
3. Reads the golden files the Go tests write (golden_*.png, `go test
   ./imageio -run Golden -update`) with PIL and checks that PIL sees the
   samples that golden_*.npy holds, so our writer is read correctly by another
   decoder.
"""
import glob
import os
import struct
import zlib

import numpy as np
from PIL import Image

D = "imageio/testdata/png"
rng = np.random.default_rng(5)


def chunk(kind, data):
    c = struct.pack(">I", len(data)) + kind + data
    return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_png(path, rows, width, height, depth, ctype, extra=b""):
    raw = b"".join(b"\x00" + r for r in rows)
    ihdr = struct.pack(">IIBBBBB", width, height, depth, ctype, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra +
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def pack(a, depth):
    """Rows of samples (H×W×C) packed at depth bits, big-endian."""
    h = a.shape[0]
    flat = a.reshape(h, -1)
    if depth == 16:
        return [r.astype(">u2").tobytes() for r in flat]
    if depth == 8:
        return [r.astype(np.uint8).tobytes() for r in flat]
    rows = []
    for r in flat:
        bits = np.unpackbits(r.astype(np.uint8)[:, None], axis=1)[:, 8 - depth:]
        rows.append(np.packbits(bits.reshape(-1)).tobytes())
    return rows


H, W = 5, 7
cases = {}
for depth in (1, 2, 4, 8, 16):
    v = rng.integers(0, 2**depth, (H, W))
    scale = {1: 255, 2: 85, 4: 17, 8: 1, 16: 1}[depth]
    dt = np.uint16 if depth == 16 else np.uint8
    cases[f"gray{depth}"] = (pack(v, depth), depth, 0, (v * scale).astype(dt), b"")
for depth in (8, 16):
    dt = np.uint16 if depth == 16 else np.uint8
    for name, ctype, c in (("ga", 4, 2), ("rgb", 2, 3), ("rgba", 6, 4)):
        v = rng.integers(0, 2**depth, (H, W, c)).astype(dt)
        cases[f"{name}{depth}"] = (pack(v, depth), depth, ctype, v, b"")
# A palette image, opaque and with transparency (tRNS).
pal = rng.integers(0, 256, (6, 3)).astype(np.uint8)
idx = rng.integers(0, 6, (H, W))
cases["palette"] = (pack(idx, 8), 8, 3, pal[idx], chunk(b"PLTE", pal.tobytes()))
alpha = np.array([255, 0, 128, 255, 7, 255], np.uint8)
cases["palette_trns"] = (pack(idx, 8), 8, 3, np.dstack([pal[idx], alpha[idx]]),
                         chunk(b"PLTE", pal.tobytes()) + chunk(b"tRNS", alpha.tobytes()))
# A gray image with a transparent gray level gains an alpha channel.
g = rng.integers(0, 4, (H, W)).astype(np.uint8) * 60
cases["gray_trns"] = (pack(g, 8), 8, 0, np.dstack([g, np.where(g == 60, 0, 255).astype(np.uint8)]),
                      chunk(b"tRNS", struct.pack(">H", 60)))

for name, (rows, depth, ctype, want, extra) in cases.items():
    write_png(f"{D}/in_{name}.png", rows, W, H, depth, ctype, extra)
    np.save(f"{D}/in_{name}.npy", want)

photo = rng.integers(0, 256, (16, 24, 3)).astype(np.uint8)
photo = np.clip(photo // 2 + np.linspace(0, 120, 24)[None, :, None], 0, 255).astype(np.uint8)
# 4:4:4 (no chroma subsampling): decoders differ most in how they upsample
# chroma, which would hide a real decoding error.
Image.fromarray(photo).save(f"{D}/photo.jpg", quality=90, subsampling=0)
np.save(f"{D}/photo.jpg.npy", np.asarray(Image.open(f"{D}/photo.jpg").convert("RGB")))
Image.fromarray(photo[..., 0]).save(f"{D}/gray.jpg", quality=90)
np.save(f"{D}/gray.jpg.npy", np.asarray(Image.open(f"{D}/gray.jpg")))

checked = 0
for path in sorted(glob.glob(f"{D}/golden_*.png")):
    want = np.load(path[:-4] + ".npy")
    im = Image.open(path)
    got = np.asarray(im)
    if im.mode in ("I;16", "I;16B", "I"):
        got = got.astype(np.uint16)
    if got.shape != want.shape or not np.array_equal(got, want):
        raise SystemExit(f"{path}: PIL reads {im.mode} {got.shape} {got.dtype}, not the golden samples")
    checked += 1
print(f"wrote {len(cases)} PNG fixtures and 2 JPEGs; PIL read {checked} golden PNGs as written")
