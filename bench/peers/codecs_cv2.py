#!/usr/bin/python3
"""OpenCV's encode and decode times beside ndconv's codec benchmarks.

Run the Go benchmarks first with NDCONV_CODEC_BENCH_DIR=DIR (they write
the images as .npy and the files ndconv wrote), then this script on DIR:

    mkdir -p /tmp/codecbench
    NDCONV_CODEC_BENCH_DIR=/tmp/codecbench go test ./imageio -run '^$' -bench 'TIFF|JPEG|PNG'
    /usr/bin/python3 bench/peers/codecs_cv2.py /tmp/codecbench
    NDCONV_CODEC_BENCH_DIR=/tmp/codecbench go test ./imageio -run '^$' -bench ReadPeerFiles

(the last times ndconv reading the files OpenCV wrote, which the script
leaves in DIR as cv2-*).

It times, on the same pixels (RGB flipped to BGR first, so both files hold
the same RGB) and OpenCV's default threads: cv2.imencode to memory and
cv2.imdecode from memory of OpenCV's own file and of ndconv's, TIFF with
Deflate (8) and LZW (5) (OpenCV's defaults otherwise: horizontal
predictor, strips of about 8 KiB) and JPEG at quality 95 (OpenCV's
default). Checks that cv2 (and PIL, for TIFF) read ndconv's files as
written. Prints best and median of --repeat runs, in ms, and file sizes.
"""
import argparse
import os
import statistics
import time

import cv2
import numpy as np

try:
    from PIL import Image
except ImportError:
    Image = None


def timeit(fn, repeat):
    """Best and median wall time in ms, median CPU time in ms (all of the
    process's threads: the work done, which waiting for a core on a shared
    machine does not inflate), and fn's result."""
    ts, cs = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
        cs.append(time.process_time() - c0)
    return min(ts) * 1e3, statistics.median(ts) * 1e3, statistics.median(cs) * 1e3, out


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
        ("gray512", "q95", ".jpg", [cv2.IMWRITE_JPEG_QUALITY, 95]),
        ("rgb8", "png", ".png", []),
    ]
    for name, codec, ext, params in cases:
        path = os.path.join(args.dir, name + ".npy")
        if not os.path.exists(path):
            continue
        a = np.load(path)
        if a.ndim == 3:
            a = np.ascontiguousarray(a[..., ::-1])
        best, med, cpu, (ok, buf) = timeit(lambda: cv2.imencode(ext, a, params), args.repeat)
        assert ok
        buf.tofile(os.path.join(args.dir, f"cv2-{name}-{codec}{ext}"))  # for BenchmarkReadPeerFiles
        print(f"{name} {codec} encode: best {best:.3g} ms, median {med:.3g} ms, cpu {cpu:.3g} ms, {buf.size} bytes")
        flag = cv2.IMREAD_UNCHANGED
        best, med, cpu, b = timeit(lambda: cv2.imdecode(buf, flag), args.repeat)
        if ext != ".jpg":
            assert np.array_equal(b, a), "cv2 did not read its own file back"
        print(f"{name} {codec} decode (cv2's file): best {best:.3g} ms, median {med:.3g} ms, cpu {cpu:.3g} ms")
        ours = os.path.join(args.dir, f"{name}-{codec}{ext}")
        if os.path.exists(ours):
            data = np.fromfile(ours, np.uint8)
            best, med, cpu, b = timeit(lambda: cv2.imdecode(data, flag), args.repeat)
            if ext != ".jpg":
                assert b is not None and np.array_equal(b, a), f"cv2 read {ours} differently"
            print(f"{name} {codec} decode (ndconv's file): best {best:.3g} ms, median {med:.3g} ms, cpu {cpu:.3g} ms")
            if Image is not None and ext == ".tif":
                # PIL (through libtiff) reads ndconv's file as written.
                assert np.array_equal(np.array(Image.open(ours)), np.load(path)), f"PIL read {ours} differently"


if __name__ == "__main__":
    main()
