#!/usr/bin/python3
"""Write the filters package's fixtures from scipy.ndimage and skimage.

Run from the repository root with Debian's python3-scipy and python3-skimage
(scipy 1.10.1, scikit-image 0.19.3):
    /usr/bin/python3 filters/testdata/make_filters.py

It writes
  gaussian1d.json  scipy's order-0 Gaussian weights (_gaussian_kernel1d);
  filters.json     the manifest: inputs, filtering cases and Gabor kernels,
                   each naming slices [offset, count] of filters.npy;
  filters.npy      every number, one float64 vector.

A filtering case is a spec for filters.Parse, an input (1-D 13, 2-D 9x11,
3-D 5x6x7, float64, fixed seed), a border mode and cval, and scipy's outputs,
one per Filter that Build returns (several for a Gabor bank).

Constant mode (cval != 0) needs care: scipy's separable filters (sobel,
gaussian with order > 0, gaussian_laplace, ...) run 1-D passes and pad each
pass's intermediate array with cval, so their borders are not those of one
N-D correlation of the cval-extended input, which is what ndconv computes (a
filter is a set of linear correlations). For constant mode the expected output
is therefore scipy's filter applied to the input already extended by cval far
enough that no pass sees the border, then cropped; "passwise_diff" records how
far the plain scipy call (cval applied per pass) is from it.
"""
import json
import math

import numpy as np
import scipy
import scipy.ndimage as ndi
import skimage
from scipy.ndimage._filters import _gaussian_kernel1d
from skimage.filters import gabor, gabor_kernel

OUT = "filters/testdata/"
MODES = ["reflect", "mirror", "nearest", "wrap", "constant"]
CVAL = 1.5  # the constant mode's value; nonzero so that cval matters
PAD = 40    # more than the sum of every case's kernel radii over all passes

rng = np.random.default_rng(20240611)
inputs = {
    "1d": rng.standard_normal(13),
    "2d": rng.standard_normal((9, 11)),
    "3d": rng.standard_normal((5, 6, 7)),
}

blob = []  # chunks of filters.npy
size = 0


def put(a):
    """Append a's values (C order) to the blob; return [offset, count]."""
    global size
    a = np.ascontiguousarray(a, dtype=np.float64).ravel()
    blob.append(a)
    size += a.size
    return [size - a.size, a.size]


def lst(v):
    """A per-axis value the way a spec writes it: 2x1."""
    if isinstance(v, (list, tuple)):
        return "x".join(repr(e) for e in v)
    return repr(v)


def sobel_like(smooth):
    """scipy's sobel/prewitt order of passes, with the given smoothing."""
    def f(x, axis=-1, mode="reflect", cval=0.0):
        axis = axis % x.ndim
        out = ndi.correlate1d(x, [-1, 0, 1], axis, mode=mode, cval=cval)
        for ii in range(x.ndim):
            if ii != axis:
                out = ndi.correlate1d(out, smooth, ii, mode=mode, cval=cval)
        return out
    return f


scharr = sobel_like([3, 10, 3])


def gabor_real(**kw):
    return np.real(gabor_kernel(**kw))


def gabor_call(kw):
    return lambda x, mode, cval: [ndi.correlate(x, gabor_real(**kw), mode=mode, cval=cval)]


def bank_call(n, kw):
    def f(x, mode, cval):
        theta = kw.get("theta", 0.0)
        return [ndi.correlate(x, gabor_real(**dict(kw, theta=theta + k * math.pi / n)),
                              mode=mode, cval=cval) for k in range(n)]
    return f


def one(func, **kw):
    return lambda x, mode, cval: [func(x, mode=mode, cval=cval, **kw)]


# (spec, call description, function(x, mode, cval) -> list of outputs,
#  ranks, modes: "all" or how many, taken in turn from MODES).
CASES = [
    ("gaussian:sigma=1", "gaussian_filter(x, 1)", one(ndi.gaussian_filter, sigma=1.0), "1d 2d 3d", "all"),
    ("gaussian:sigma=2", "gaussian_filter(x, 2)", one(ndi.gaussian_filter, sigma=2.0), "2d 3d", 2),
    ("gaussian:sigma=2x0,order=0x1", "gaussian_filter(x, [2, 0], order=[0, 1])",
     one(ndi.gaussian_filter, sigma=[2.0, 0.0], order=[0, 1]), "2d", 2),
    ("gaussian:sigma=0.8,order=2", "gaussian_filter(x, 0.8, order=2)",
     one(ndi.gaussian_filter, sigma=0.8, order=2), "1d 2d", 2),
    ("gaussian:sigma=1.2x0.9,order=1x0,truncate=2.5", "gaussian_filter(x, [1.2, 0.9], order=[1, 0], truncate=2.5)",
     one(ndi.gaussian_filter, sigma=[1.2, 0.9], order=[1, 0], truncate=2.5), "2d", "all"),
    ("gaussian:sigma=1.5x0.7x0,order=1x2x0,truncate=3", "gaussian_filter(x, [1.5, 0.7, 0], order=[1, 2, 0], truncate=3)",
     one(ndi.gaussian_filter, sigma=[1.5, 0.7, 0.0], order=[1, 2, 0], truncate=3.0), "3d", "all"),
    ("gaussian:sigma=0.3x1e-16x1", "gaussian_filter(x, [0.3, 1e-16, 1])",
     one(ndi.gaussian_filter, sigma=[0.3, 1e-16, 1.0]), "3d", 1),

    ("uniform", "uniform_filter(x)", one(ndi.uniform_filter), "1d 2d 3d", "all"),
    ("uniform:size=4", "uniform_filter(x, 4)", one(ndi.uniform_filter, size=4), "1d 2d 3d", "all"),
    ("uniform:size=2x5", "uniform_filter(x, [2, 5])", one(ndi.uniform_filter, size=[2, 5]), "2d", 2),
    ("uniform:size=1x4x3", "uniform_filter(x, [1, 4, 3])", one(ndi.uniform_filter, size=[1, 4, 3]), "3d", 2),

    ("sobel", "sobel(x)", one(ndi.sobel), "1d 2d 3d", "all"),
    ("sobel:axis=0", "sobel(x, 0)", one(ndi.sobel, axis=0), "2d 3d", "all"),
    ("sobel:axis=1", "sobel(x, 1)", one(ndi.sobel, axis=1), "3d", 2),
    ("sobel:axis=-3", "sobel(x, -3)", one(ndi.sobel, axis=-3), "3d", 1),
    ("prewitt:axis=0", "prewitt(x, 0)", one(ndi.prewitt, axis=0), "2d 3d", "all"),
    ("prewitt", "prewitt(x)", one(ndi.prewitt), "1d 2d 3d", 2),
    ("scharr:axis=0", "correlate1d passes [-1,0,1] on axis 0, [3,10,3] on the others",
     one(scharr, axis=0), "2d 3d", "all"),
    ("scharr", "correlate1d passes [-1,0,1] on axis -1, [3,10,3] on the others",
     one(scharr), "2d 3d", 2),

    ("laplace", "laplace(x)", one(ndi.laplace), "1d 2d 3d", "all"),

    ("log:sigma=1", "gaussian_laplace(x, 1)", one(ndi.gaussian_laplace, sigma=1.0), "1d 2d 3d", "all"),
    ("gaussian_laplace:sigma=1.5x0.8,truncate=3", "gaussian_laplace(x, [1.5, 0.8], truncate=3)",
     one(ndi.gaussian_laplace, sigma=[1.5, 0.8], truncate=3.0), "2d", 2),
    ("gaussian-laplace:sigma=1x0x2", "gaussian_laplace(x, [1, 0, 2])",
     one(ndi.gaussian_laplace, sigma=[1.0, 0.0, 2.0]), "3d", 2),

    ("gradient-magnitude:sigma=1", "gaussian_gradient_magnitude(x, 1)",
     one(ndi.gaussian_gradient_magnitude, sigma=1.0), "1d 2d 3d", "all"),
    ("ggm:sigma=0.7x1.3", "gaussian_gradient_magnitude(x, [0.7, 1.3])",
     one(ndi.gaussian_gradient_magnitude, sigma=[0.7, 1.3]), "2d", 2),
    ("gaussian_gradient_magnitude:sigma=1x2x0,truncate=3", "gaussian_gradient_magnitude(x, [1, 2, 0], truncate=3)",
     one(ndi.gaussian_gradient_magnitude, sigma=[1.0, 2.0, 0.0], truncate=3.0), "3d", 2),

    ("gabor:frequency=0.25,theta=0.5", "correlate(x, real(gabor_kernel(0.25, theta=0.5)))",
     gabor_call(dict(frequency=0.25, theta=0.5)), "2d", "all"),
    ("gabor:frequency=0.3,theta=1.2,sigma_x=1.5,sigma_y=2,n_stds=2,offset=0.7",
     "correlate(x, real(gabor_kernel(0.3, 1.2, sigma_x=1.5, sigma_y=2, n_stds=2, offset=0.7)))",
     gabor_call(dict(frequency=0.3, theta=1.2, sigma_x=1.5, sigma_y=2.0, n_stds=2, offset=0.7)), "2d", 2),
    # skimage.filters.gabor convolves: its real response is a correlation
    # with the kernel of the opposite phase.
    ("gabor:frequency=0.35,theta=2,offset=-0.7", "skimage.filters.gabor(x, 0.35, theta=2, offset=0.7)[0]",
     lambda x, mode, cval: [gabor(x, 0.35, theta=2.0, offset=0.7, mode=mode, cval=cval)[0]], "2d", 2),
    ("gabor-bank:orientations=4,frequency=0.3,bandwidth=1.5,theta=0.1",
     "correlate(x, real(gabor_kernel(0.3, theta=0.1 + k*pi/4, bandwidth=1.5))) for k in 0..3",
     bank_call(4, dict(frequency=0.3, bandwidth=1.5, theta=0.1)), "2d", "all"),
]

GABOR_KERNELS = [
    dict(frequency=0.2),
    dict(frequency=0.25, theta=0.5),
    dict(frequency=0.1, theta=math.pi / 2, bandwidth=0.8),
    dict(frequency=0.3, theta=1.2, sigma_x=1.5, sigma_y=2.0, n_stds=2, offset=0.7),
    dict(frequency=0.4, theta=-2.5, sigma_x=0.6, n_stds=4.5, offset=-1.1),
    dict(frequency=0.05, theta=3.0, sigma_y=3.0, bandwidth=2.0),
]


def gabor_spec(kw):
    keys = ["frequency", "theta", "bandwidth", "sigma_x", "sigma_y", "n_stds", "offset"]
    return "gabor:" + ",".join("%s=%r" % (k, kw[k]) for k in keys if k in kw)


def expected(func, x, mode):
    """func's outputs for x, with constant mode as one N-D correlation."""
    if mode != "constant":
        return func(x, mode, 0.0), 0.0
    padded = np.pad(x, PAD, mode="constant", constant_values=CVAL)
    crop = tuple(slice(PAD, PAD + n) for n in x.shape)
    want = [o[crop] for o in func(padded, "constant", CVAL)]
    passwise = func(x, "constant", CVAL)
    diff = max(float(np.abs(w - p).max()) for w, p in zip(want, passwise))
    return want, diff


def main():
    with open(OUT + "gaussian1d.json", "w") as f:
        cases = []
        for sigma, truncate in [(0.3, 4.0), (1.0, 4.0), (2.0, 4.0), (0.7, 3.0), (3.3, 2.5), (10.0, 4.0)]:
            radius = int(truncate * sigma + 0.5)
            cases.append({"sigma": sigma, "truncate": truncate,
                          "weights": [float(v) for v in _gaussian_kernel1d(sigma, 0, radius)]})
        json.dump({"scipy": scipy.__version__, "cases": cases}, f, indent=1)

    manifest = {"scipy": scipy.__version__, "skimage": skimage.__version__,
                "cval": CVAL, "inputs": {}, "cases": [], "gabor_kernels": []}
    for name, x in inputs.items():
        manifest["inputs"][name] = {"shape": list(x.shape), "data": put(x)}
    turn = 0
    for spec, call, func, ranks, modes in CASES:
        for rank in ranks.split():
            if modes == "all":
                chosen = MODES
            else:
                chosen = [MODES[(turn + i) % len(MODES)] for i in range(modes)]
                turn += modes
            for mode in chosen:
                want, diff = expected(func, inputs[rank], mode)
                case = {"spec": spec, "scipy": call, "input": rank, "mode": mode,
                        "cval": CVAL if mode == "constant" else 0.0,
                        "outputs": [put(w) for w in want]}
                if diff > 1e-12:
                    case["passwise_diff"] = diff
                manifest["cases"].append(case)
    for kw in GABOR_KERNELS:
        k = gabor_real(**kw)
        manifest["gabor_kernels"].append({"spec": gabor_spec(kw), "skimage": "real(gabor_kernel(**%r))" % kw,
                                          "shape": list(k.shape), "weights": put(k)})
    np.save(OUT + "filters.npy", np.concatenate(blob))
    with open(OUT + "filters.json", "w") as f:
        json.dump(manifest, f, indent=0)
        f.write("\n")


main()
