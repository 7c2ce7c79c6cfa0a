#!/usr/bin/python3
"""Writes the JPEG fixtures of imageio/jpeg's tests with OpenCV (and PIL,
for the samplings cv2 4.6 cannot write), both on the system's
libjpeg62-turbo 2.1.5. Run from this directory with /usr/bin/python3:

    cd imageio/jpeg/testdata && /usr/bin/python3 gen.py

For each case NAME it writes
  NAME.src.png   the pixels encoded (RGB or gray), for the encoder tests;
  NAME.jpg       the file cv2.imencode (or PIL) wrote from them;
  NAME.want.png  cv2.imdecode(NAME.jpg, IMREAD_UNCHANGED), BGR turned to
                 RGB: the samples the decoder must give;
and cases.txt, one line per case: NAME WRITER QUALITY SAMPLING RST, where
WRITER is cv2 (the encoder must give the same bytes) or pil, edit (a cv2
file with its markers edited) and ours (a file our encoder wrote, see
TestWriteOurs440: only decoded here).
"""
import glob
import os

import cv2
import numpy as np
from PIL import Image


def content(kind, h, w, c, rng):
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    chans = []
    for k in range(c):
        v = 128 + 90 * np.sin(x / (5 + 3 * k) + k) * np.cos(y / (7 + 2 * k))
        if kind == "noisy":
            v = v + rng.integers(-60, 61, (h, w))
        elif kind == "random":
            v = rng.integers(0, 256, (h, w))
        elif kind == "extreme":  # saturated blocks: exercises range limits
            v = np.where(((x // 3 + y // 2 + k) % 3) == 0, 255.0, 0.0)
        chans.append(v)
    a = np.clip(np.stack(chans, -1), 0, 255).astype(np.uint8)
    return a[..., 0] if c == 1 else a


def rgb(a):
    return a if a.ndim == 2 else np.ascontiguousarray(a[..., ::-1])


def write_png(path, a):
    assert cv2.imwrite(path, rgb(a))


def decode_cv2(buf):
    b = cv2.imdecode(np.frombuffer(buf, np.uint8), cv2.IMREAD_UNCHANGED)
    assert b is not None
    return rgb(b)


def main():
    rng = np.random.default_rng(2026)
    lines = []

    def case(name, a, writer, q, samp="420", rst=0, buf=None):
        if buf is None:
            if writer == "cv2":
                params = [cv2.IMWRITE_JPEG_QUALITY, q]
                if rst:
                    params += [cv2.IMWRITE_JPEG_RST_INTERVAL, rst]
                ok, b = cv2.imencode(".jpg", rgb(a), params)
                assert ok
                buf = b.tobytes()
            else:  # pil
                sub = {"444": 0, "422": 1, "420": 2}[samp]
                import io
                f = io.BytesIO()
                Image.fromarray(a).save(f, "JPEG", quality=q, subsampling=sub)
                buf = f.getvalue()
        if a is not None:
            write_png(name + ".src.png", a)
        with open(name + ".jpg", "wb") as f:
            f.write(buf)
        write_png(name + ".want.png", decode_cv2(buf))
        lines.append(f"{name} {writer} {q} {samp} {rst}")

    sizes = [(1, 1), (2, 2), (3, 5), (7, 9), (9, 7), (16, 16), (17, 33), (33, 17), (48, 64), (120, 97)]
    kinds = ["smooth", "noisy", "random", "extreme"]
    quals = [1, 50, 75, 95, 100]
    n = 0
    for (h, w) in sizes:
        for c in (1, 3):
            kind = kinds[n % len(kinds)]
            q = quals[n % len(quals)]
            n += 1
            a = content(kind, h, w, c, rng)
            case(f"cv2_{'gray' if c == 1 else 'rgb'}_{h}x{w}_{kind}_q{q}", a, "cv2", q)
    # Every quality on one mid-sized image of each kind.
    for q in quals:
        for c in (1, 3):
            a = content("noisy", 40, 56, c, rng)
            case(f"cv2_{'gray' if c == 1 else 'rgb'}_40x56_noisy_q{q}", a, "cv2", q)
    # Restart intervals (odd intervals, crossing MCU rows).
    for (h, w, c, rst) in [(50, 70, 3, 1), (50, 70, 3, 3), (64, 48, 1, 5), (35, 100, 3, 7)]:
        a = content("noisy", h, w, c, rng)
        case(f"cv2_rst{rst}_{'gray' if c == 1 else 'rgb'}_{h}x{w}", a, "cv2", 90, rst=rst)
    # 4:4:4 and 4:2:2 through PIL (cv2 4.6 has no sampling option).
    for samp in ("444", "422"):
        for (h, w) in [(1, 1), (2, 3), (3, 2), (5, 6), (31, 45), (64, 48)]:
            a = content("noisy", h, w, 3, rng)
            case(f"pil_{samp}_{h}x{w}", a, "pil", 85, samp)
    # An RGB JPEG (Adobe APP14 transform 0 in place of JFIF), and one
    # told apart only by its component ids R, G, B.
    a = content("noisy", 21, 30, 3, rng)
    ok, b = cv2.imencode(".jpg", rgb(a), [cv2.IMWRITE_JPEG_QUALITY, 90])
    b = b.tobytes()
    assert b[2:4] == b"\xff\xe0"
    app0 = 4 + int.from_bytes(b[4:6], "big")
    adobe = b"\xff\xee\x00\x0eAdobe\x00\x64\x00\x00\x00\x00\x00"
    case("edit_adobe_rgb", None, "edit", 90, buf=b[:2] + adobe + b[app0:])
    noj = bytearray(b[:2] + b[app0:])
    sof = noj.index(b"\xff\xc0")
    for i, cid in enumerate(b"RGB"):
        noj[sof + 10 + 3 * i] = cid
    sos = noj.index(b"\xff\xda")
    for i, cid in enumerate(b"RGB"):
        noj[sos + 5 + 2 * i] = cid
    case("edit_ids_rgb", None, "edit", 90, buf=bytes(noj))
    # Progressive: decoded by the fallback (image/jpeg), not here.
    a = content("smooth", 24, 40, 3, rng)
    ok, b = cv2.imencode(".jpg", rgb(a), [cv2.IMWRITE_JPEG_QUALITY, 90, cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    with open("progressive.jpg", "wb") as f:
        f.write(b.tobytes())
    # Files our encoder wrote in samplings no writer here offers.
    for path in sorted(glob.glob("ours_*.jpg")):
        name = path[:-4]
        with open(path, "rb") as f:
            buf = f.read()
        write_png(name + ".want.png", decode_cv2(buf))
        lines.append(f"{name} ours 0 - 0")
    with open("cases.txt", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
