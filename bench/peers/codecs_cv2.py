#!/usr/bin/python3
"""OpenCV's encode and decode times beside ndconv's codec benchmarks.

Run the Go benchmarks first with NDCONV_CODEC_BENCH_DIR=DIR (they write
the images as .npy and the files ndconv wrote), then this script on DIR:

    mkdir -p /tmp/codecbench
    NDCONV_CODEC_BENCH_DIR=/tmp/codecbench go test ./imageio -run '^$' -bench 'TIFF|JPEG|PNG'
    /usr/bin/python3 bench/peers/codecs_cv2.py /tmp/codecbench

It times, on the same pixels (RGB flipped to BGR first, so both files hold
the same RGB) and OpenCV's default threads: cv2.imencode to memory and
cv2.imdecode from memory of OpenCV's own file and of ndconv's, TIFF with
Deflate (8) and LZW (5) (OpenCV's defaults otherwise: horizontal
predictor, strips of about 8 KiB) and JPEG at quality 95 (OpenCV's
default). Prints best and median of --repeat runs, in ms, and file sizes.
"""
import argparse
import os
import statistics
import time

import cv2
import numpy as np


def timeit(fn, repeat):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return min(ts) * 1e3, statistics.median(ts) * 1e3, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print(f"cv2 {cv2.__version__}, threads {cv2.getNumThreads()}, load {os.getloadavg()[0]:.1f}")
    cases = [
        ("rgb8", "deflate", ".tif", [cv2.IMWRITE_TIFF_COMPRESSION, 8]),
        ("rgb8", "lzw", ".tif", [cv2.IMWRITE_TIFF_COMPRESSION, 5]),
        ("gray16", "deflate", ".tif", [cv2.IMWRITE_TIFF_COMPRESSION, 8]),
        ("gray16", "lzw", ".tif", [cv2.IMWRITE_TIFF_COMPRESSION, 5]),
        ("rgb8", "q95", ".jpg", [cv2.IMWRITE_JPEG_QUALITY, 95]),
        ("rgb8", "png", ".png", []),
    ]
    for name, codec, ext, params in cases:
        path = os.path.join(args.dir, name + ".npy")
        if not os.path.exists(path):
            continue
        a = np.load(path)
        if a.ndim == 3:
            a = np.ascontiguousarray(a[..., ::-1])
        best, med, (ok, buf) = timeit(lambda: cv2.imencode(ext, a, params), args.repeat)
        assert ok
        print(f"{name} {codec} encode: best {best:.0f} ms, median {med:.0f} ms, {buf.size} bytes")
        flag = cv2.IMREAD_UNCHANGED
        best, med, b = timeit(lambda: cv2.imdecode(buf, flag), args.repeat)
        if ext != ".jpg":
            assert np.array_equal(b, a), "cv2 did not read its own file back"
        print(f"{name} {codec} decode (cv2's file): best {best:.0f} ms, median {med:.0f} ms")
        ours = os.path.join(args.dir, f"{name}-{codec}{ext}")
        if os.path.exists(ours):
            data = np.fromfile(ours, np.uint8)
            best, med, b = timeit(lambda: cv2.imdecode(data, flag), args.repeat)
            if ext != ".jpg":
                assert b is not None and np.array_equal(b, a), f"cv2 read {ours} differently"
            print(f"{name} {codec} decode (ndconv's file): best {best:.0f} ms, median {med:.0f} ms")


if __name__ == "__main__":
    main()
