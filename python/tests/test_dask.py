"""ndconv.dask: every border mode over chunkings (chunks shorter than the
kernel's reach included), 1-D to 3-D, odd and even kernels, origins,
integer dtypes, the named filters, against ndconv on the whole array (bit
for bit) and scipy.ndimage; to_zarr through ndconv's Zarr writer read back
by ndconv and zarr-python; and a 4-process dask.distributed LocalCluster
with a worker killed mid-run. Skipped without dask (Debian: python3-dask;
the cluster test also needs python3-distributed)."""
import os
import signal
import threading
import time

import numpy as np
import pytest
import scipy.ndimage as ndi

da = pytest.importorskip("dask.array")
import ndconv  # noqa: E402
import ndconv.dask as ndd  # noqa: E402

MODES = ["reflect", "mirror", "nearest", "wrap", "constant", "grid-wrap", "grid-mirror", "grid-constant"]
# Shapes and chunkings: chunks of 1 and chunks shorter than a 7-tap
# kernel's reach, uneven chunks, one chunk along an axis.
LAYOUTS = [((13,), (3,)), ((6,), (1,)), ((11, 9), (4, 2)), ((20, 7), (20, 3)), ((7, 8, 6), (3, 2, 4))]


def sync(a):
    return a.compute(scheduler="sync")


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("mode", MODES)
def test_kernels_every_mode_and_chunking(mode):
    """correlate and convolve: bits of ndconv on the whole array, values of
    scipy (float64: within 1e-11; the kernel as long as the axis or longer
    included, reflecting more than once)."""
    rng = np.random.default_rng(sum(map(ord, mode)))
    for shape, chunks in LAYOUTS:
        x = rng.standard_normal(shape)
        dx = da.from_array(x, chunks=chunks)
        for k in (3, 4, 7):
            w = rng.standard_normal((k,) * len(shape))
            origin = [int(rng.integers(-(k // 2), (k - 1) // 2 + 1)) for _ in shape]
            for op in ("correlate", "convolve"):
                got = sync(getattr(ndd, op)(dx, w, mode=mode, cval=1.5, origin=origin))
                want = getattr(ndconv, op)(x, w, mode=mode, cval=1.5, origin=origin)
                assert same_bits(got, want), (op, shape, chunks, k, origin)
                ref = getattr(ndi, op)(x, w, mode=mode, cval=1.5, origin=origin)
                np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-11, err_msg=str((op, shape, chunks, k)))


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "float32"])
def test_kernels_dtypes(dtype):
    """Integer and float32 data, wrap and constant (the two modes a block
    cannot make alone), both integer rules; integer='scipy' gives scipy's
    values exactly."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((10, 9, 7)) * 40 + 100).astype(dtype)
    dx = da.from_array(x, chunks=(3, 4, 2))
    w = rng.standard_normal((3, 4, 2))
    for mode in ("wrap", "constant", "reflect"):
        for integer in ("round", "scipy"):
            for op in ("correlate", "convolve"):
                got = sync(getattr(ndd, op)(dx, w, mode=mode, cval=7, origin=(1, -1, 0), integer=integer))
                want = getattr(ndconv, op)(x, w, mode=mode, cval=7, origin=(1, -1, 0), integer=integer)
                assert same_bits(got, want), (op, mode, integer)
                if integer == "scipy" and dtype != "float32":
                    ref = getattr(ndi, op)(x, w, mode=mode, cval=7, origin=(1, -1, 0))
                    assert np.array_equal(got, ref), (op, mode)
    # A kernel spanning some axes (axes=), an output dtype.
    got = sync(ndd.correlate(dx, w[:, :, 0], mode="wrap", axes=(2, 0), output=np.float64))
    assert same_bits(got, ndconv.correlate(x, w[:, :, 0], mode="wrap", axes=(2, 0), output=np.float64))


def _named_cases(ndim):
    rest = [1.0] * (ndim - 2)
    return [
        ("gaussian_filter", dict(sigma=1.3)),
        ("gaussian_filter", dict(sigma=[0.8, 2.0] + rest, order=[0, 1] + [0] * (ndim - 2), truncate=3.0)),
        ("gaussian_filter", dict(sigma=2.0, mode=["wrap", "constant"] + ["mirror"] * (ndim - 2), cval=3.0)),
        ("gaussian_filter1d", dict(sigma=1.5, axis=0, order=2)),
        ("uniform_filter", dict(size=4)),
        ("uniform_filter", dict(size=[3, 2] + [5] * (ndim - 2), origin=[1, 0] + [-2] * (ndim - 2))),
        ("uniform_filter1d", dict(size=5, axis=-1, origin=-1)),
        ("sobel", dict(axis=0)),
        ("prewitt", dict(axis=-1)),
        ("laplace", {}),
        ("gaussian_laplace", dict(sigma=1.0)),
        ("gaussian_gradient_magnitude", dict(sigma=0.9)),
        ("correlate1d", dict(weights=[1, -2, 3, 0.5], axis=0, origin=1)),
        ("convolve1d", dict(weights=[1, -2, 3, 0.5], axis=-1)),
    ]


@pytest.mark.parametrize("mode", ["reflect", "wrap", "constant", "mirror", "nearest"])
def test_named_filters(mode):
    """Every named filter over chunks shorter than its reach: ndconv's bits
    on the whole array, scipy's values (float64)."""
    rng = np.random.default_rng(3)
    for shape, chunks in (((15, 12), (4, 5)), ((9, 8, 7), (2, 3, 7))):
        x = rng.standard_normal(shape)
        dx = da.from_array(x, chunks=chunks)
        for name, kw in _named_cases(len(shape)):
            kw = dict(kw)
            kw.setdefault("mode", mode)
            kw.setdefault("cval", 2.5)
            got = sync(getattr(ndd, name)(dx, **kw))
            assert same_bits(got, getattr(ndconv, name)(x, **kw)), (name, kw, chunks)
            np.testing.assert_allclose(got, getattr(ndi, name)(x, **kw), rtol=1e-9, atol=1e-9,
                                       err_msg="%s %s" % (name, kw))


def test_named_filters_integers():
    """uint8 data through the separable filters: both integer rules give
    ndconv's bits; integer='scipy' scipy's values."""
    rng = np.random.default_rng(4)
    x = rng.integers(0, 256, (13, 11), dtype=np.uint8)
    dx = da.from_array(x, chunks=(3, 2))
    for integer in ("round", "scipy"):
        for name, kw in _named_cases(2):
            kw = dict(kw, integer=integer)
            kw.setdefault("mode", "wrap")
            got = sync(getattr(ndd, name)(dx, **kw))
            assert same_bits(got, getattr(ndconv, name)(x, **kw)), (name, kw)


def test_aliases_and_errors():
    x = np.arange(40.0).reshape(5, 8)
    dx = da.from_array(x, chunks=(2, 3))
    for alias, rule in (("symmetric", "reflect"), ("reflect101", "mirror"), ("edge", "nearest"), ("Wrap", "wrap")):
        assert same_bits(sync(ndd.uniform_filter(dx, 4, mode=alias)), ndconv.uniform_filter(x, 4, mode=rule))
    with pytest.raises(ndconv.ArgumentError, match="mode|border"):
        ndd.correlate(dx, np.ones((3, 3)), mode="bogus")
    with pytest.raises(ndconv.ArgumentError, match="origin"):
        ndd.correlate(dx, np.ones((3, 3)), origin=2)
    with pytest.raises(ndconv.ArgumentError, match="output"):
        ndd.correlate(dx, np.ones((3, 3)), output=np.empty((5, 8)))
    # Empty arrays give ndconv's empty results.
    e = ndd.gaussian_filter(da.zeros((0, 5), chunks=(1, 2)), 1.0)
    assert same_bits(sync(e), ndconv.gaussian_filter(np.zeros((0, 5)), 1.0))


def test_dask_image_style_wrap_is_wrong_here():
    """The check can fail: filtering each block with mode='wrap' (dask-image's
    way, dask-image#242) differs from the whole array's wrap at chunk edges;
    ndconv.dask does not."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((12, 10))
    w = rng.standard_normal((5, 5))
    dx = da.from_array(x, chunks=(4, 5))
    naive = sync(dx.map_overlap(ndi.correlate, depth=2, boundary="none", weights=w, mode="wrap"))
    want = ndi.correlate(x, w, mode="wrap")
    assert not np.allclose(naive, want)
    np.testing.assert_allclose(sync(ndd.correlate(dx, w, mode="wrap")), want, rtol=1e-12, atol=1e-12)


def test_tasks_per_block():
    """The halo exchange costs 4 tasks a block in 3-D (an export per axis,
    the filter), border included; map_overlap's would be about 21 plus a
    padding pass. A scheduler's cost is per task."""
    x = da.zeros((64, 64, 64), chunks=16, dtype=np.float32)
    for mode in ("wrap", "reflect", "constant"):
        y = ndd.correlate(x, np.ones((5, 5, 5)), mode=mode)
        ntasks = len(dict(y.__dask_graph__())) - x.npartitions
        assert ntasks <= 4 * x.npartitions, (mode, ntasks)


def _files(root):
    out = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            with open(os.path.join(d, f), "rb") as fh:
                out[os.path.relpath(os.path.join(d, f), root)] = fh.read()
    return out


def test_to_zarr_round_trip(tmp_path):
    """v3 with shards through ndconv's writer, read back by ndconv; written
    twice, the same bytes (whole shards, idempotent); v2 read back by
    zarr-python."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((37, 20, 9)).astype(np.float32)
    dx = da.from_array(x, chunks=(7, 6, 9))
    y = ndd.gaussian_filter(dx, 1.2, mode="wrap")
    want = ndconv.gaussian_filter(x, 1.2, mode="wrap")
    url = str(tmp_path / "out.zarr")
    z = ndd.to_zarr(y, url, shards=(16, 16, 9), chunks=(8, 8, 9))
    assert (z.shape, z.dtype, z.shards, z.chunks) == (x.shape, np.dtype(np.float32), (16, 16, 9), (8, 8, 9))
    assert same_bits(z.read(), want)
    assert same_bits(sync(ndd.from_zarr(url, chunks=(10, 10, 9))), want)
    first = _files(url)
    ndd.to_zarr(y, url, shards=(16, 16, 9), chunks=(8, 8, 9))
    assert _files(url) == first
    # The same bytes as the whole result written in one process.
    from ndconv._zarr import ZarrArray
    with ZarrArray.create(str(tmp_path / "whole.zarr"), x.shape, np.float32, chunks=(8, 8, 9),
                          shards=(16, 16, 9)) as whole:
        whole.write((0, 0, 0), want)
    assert _files(str(tmp_path / "whole.zarr")) == first
    # resume keeps what is there and writes the same shards again.
    ndd.to_zarr(y, url, shards=(16, 16, 9), chunks=(8, 8, 9), resume=True)
    assert _files(url) == first
    # An integer output, converted by dtype.
    z8 = ndd.to_zarr(ndd.uniform_filter(dx, 3, output=np.int16), str(tmp_path / "i.zarr"))
    assert same_bits(z8.read(), ndconv.uniform_filter(x, 3, output=np.int16))
    zarr = pytest.importorskip("zarr")
    url2 = str(tmp_path / "v2.zarr")
    ndd.to_zarr(y, url2, format=2, shards=(10, 20, 9), compressor="zlib")
    got = zarr.open(url2, mode="r")
    assert got.chunks == (10, 20, 9)
    assert same_bits(np.ascontiguousarray(got[:]), want)


def test_zarr_errors(tmp_path):
    from ndconv._zarr import ZarrArray
    with pytest.raises(ndconv.ArgumentError, match="Zarr"):
        ZarrArray.create(str(tmp_path / "no-suffix"), (4,), "float32")
    with pytest.raises(ndconv.ArgumentError, match="shards"):
        ZarrArray.create(str(tmp_path / "a.zarr"), (8,), "float32", chunks=(3,), shards=(4,))
    z = ZarrArray.create(str(tmp_path / "a.zarr"), (8, 8), "float32", chunks=(2, 8), shards=(4, 8))
    with pytest.raises(ndconv.ArgumentError, match="shard grid"):
        z.write((2, 0), np.zeros((4, 8), np.float32))
    with pytest.raises(RuntimeError):
        ZarrArray.open(str(tmp_path / "missing.zarr"))
    z.close()
    with pytest.raises(ValueError, match="closed"):
        z.read()


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    import logging
    c = distributed.LocalCluster(n_workers=4, threads_per_worker=1, processes=True, dashboard_address=None,
                                 silence_logs=logging.ERROR)
    client = distributed.Client(c)
    try:
        yield client
    finally:
        client.close()
        c.close()


def _slow(b, delay):
    time.sleep(delay)
    return b


def test_local_cluster_worker_killed(cluster, tmp_path):
    """A 4-process LocalCluster writes a filtered volume through to_zarr;
    one worker process is killed (SIGKILL) while it runs tasks. The
    scheduler re-runs what it lost elsewhere, the shards it had written are
    written again with the same bytes, and the array read back is ndconv's
    on the whole array."""
    client = cluster
    rng = np.random.default_rng(8)
    x = rng.standard_normal((36, 30, 24)).astype(np.float32)
    w = rng.standard_normal((5, 4, 3))
    want = ndconv.correlate(x, w, mode="wrap", origin=(0, 1, -1))
    # Slow source blocks (0.1 s each) keep every worker busy long enough
    # to be killed mid-run; they change no value.
    dx = da.from_array(x, chunks=(12, 10, 12)).map_blocks(_slow, 0.1, dtype=x.dtype)
    y = ndd.correlate(dx, w, mode="wrap", origin=(0, 1, -1))
    url = str(tmp_path / "k.zarr")
    writes = ndd.to_zarr(y, url, shards=(12, 10, 12), chunks=(6, 10, 12), compute=False)
    pids = client.run(os.getpid)
    fut = client.compute(writes)
    killed = []

    def kill():
        # The first worker seen processing a task.
        deadline = time.time() + 20
        while time.time() < deadline and not fut.done():
            busy = [a for a, ts in client.processing().items() if ts]
            if busy:
                os.kill(pids[busy[0]], signal.SIGKILL)
                killed.append(busy[0])
                return
            time.sleep(0.02)

    t = threading.Thread(target=kill)
    t.start()
    fut.result(timeout=120)
    t.join()
    assert killed and not fut.exception()
    assert set(client.run(os.getpid).values()) != set(pids.values())  # a new process took its place
    assert same_bits(ndd.from_zarr(url).compute(), want)
