#!/usr/bin/python3
"""Files and peers for scripts/many-files.sh (issue 27's many-file targets).

  many_files.py gen-png DIR N [--seed S] [--size 512]   N PNGs, uint8 gray, cv2.imwrite's defaults
  many_files.py gen-npy DIR N [--seed S] [--size 128]   N .npy volumes, float32, size³
  many_files.py stack DIR OUT.npy                         the volumes of DIR as one N×size³ array
  many_files.py kernel OUT.npy --shape 7x7 [--seed S]     a fixed, non-separable kernel (positive, sum 1)
  many_files.py cv2-pool IN OUT KERNEL.npy --procs P      cv2.imread + cv2.filter2D + cv2.imwrite on every
                                                          PNG of IN, a process pool of P; prints files/s

Every file is a function of (seed, index) alone, so the same files come on
any machine and with any number of processes.
"""
import argparse
import multiprocessing as mp
import os
import sys
import time

import numpy as np


def png_image(seed, i, size):
    # Smooth shapes plus noise: a microscope tile or a photograph's
    # texture, neither flat (deflate would find it trivial) nor white noise.
    rng = np.random.default_rng([seed, i])
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / size
    img = np.zeros((size, size), np.float32)
    for _ in range(6):
        cx, cy, r, a = rng.random(4)
        img += (a * 120) * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (0.02 + 0.1 * r))
    fx, fy = rng.random(2) * 20
    img += 40 * np.sin(fx * x + fy * y)
    img += rng.normal(0, 6, img.shape).astype(np.float32)
    return np.clip(img + 40, 0, 255).astype(np.uint8)


def _gen_png(a):
    import cv2
    d, seed, i, size = a
    cv2.imwrite(os.path.join(d, "img%05d.png" % i), png_image(seed, i, size))


def _gen_npy(a):
    d, seed, i, size = a
    rng = np.random.default_rng([seed, i])
    np.save(os.path.join(d, "vol%04d.npy" % i), rng.random((size, size, size), dtype=np.float32))


def gen(kind, d, n, seed, size, procs):
    os.makedirs(d, exist_ok=True)
    fn = _gen_png if kind == "png" else _gen_npy
    with mp.Pool(procs) as pool:
        pool.map(fn, [(d, seed, i, size) for i in range(n)], chunksize=16)


def _cv2_init(kernel_path):
    import cv2
    global _cv2, _kernel
    _cv2 = cv2
    cv2.setNumThreads(1)  # the pool is the parallelism
    _kernel = np.load(kernel_path).astype(np.float32)


def _cv2_one(a):
    src, dst = a
    img = _cv2.imread(src, _cv2.IMREAD_UNCHANGED)
    out = _cv2.filter2D(img, -1, _kernel, borderType=_cv2.BORDER_REFLECT_101)
    _cv2.imwrite(dst, out)


def cv2_pool(src, dst, kernel, procs):
    os.makedirs(dst, exist_ok=True)
    names = sorted(n for n in os.listdir(src) if n.endswith(".png"))
    jobs = [(os.path.join(src, n), os.path.join(dst, n)) for n in names]
    t = time.perf_counter()
    with mp.Pool(procs, initializer=_cv2_init, initargs=(kernel,)) as pool:
        for _ in pool.imap_unordered(_cv2_one, jobs, chunksize=8):
            pass
    secs = time.perf_counter() - t
    print("cv2 pool of %d: %d files, %.2f s, %.1f files/s" % (procs, len(jobs), secs, len(jobs) / secs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd")
    ap.add_argument("args", nargs="*")
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--size", type=int, default=0)
    ap.add_argument("--shape", default="7x7")
    ap.add_argument("--procs", type=int, default=os.cpu_count())
    o = ap.parse_args()
    if o.cmd == "gen-png":
        gen("png", o.args[0], int(o.args[1]), o.seed, o.size or 512, o.procs)
    elif o.cmd == "gen-npy":
        gen("npy", o.args[0], int(o.args[1]), o.seed, o.size or 128, o.procs)
    elif o.cmd == "stack":
        names = sorted(n for n in os.listdir(o.args[0]) if n.endswith(".npy"))
        first = np.load(os.path.join(o.args[0], names[0]), mmap_mode="r")
        out = np.lib.format.open_memmap(o.args[1], "w+", first.dtype, (len(names),) + first.shape)
        for i, n in enumerate(names):
            out[i] = np.load(os.path.join(o.args[0], n))
        out.flush()
    elif o.cmd == "kernel":
        shape = tuple(int(s) for s in o.shape.split("x"))
        rng = np.random.default_rng(o.seed)
        k = rng.random(shape) + 0.25
        np.save(o.args[0], (k / k.sum()).astype(np.float32))
    elif o.cmd == "cv2-pool":
        cv2_pool(o.args[0], o.args[1], o.args[2], o.procs)
    else:
        sys.exit("many_files.py: unknown command %r" % o.cmd)


if __name__ == "__main__":
    main()
