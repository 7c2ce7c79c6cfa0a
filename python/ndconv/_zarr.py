"""Zarr arrays through ndconv's own Zarr package (the Go zarr package over
the C API's ndconv_zarr_* functions): create an array's metadata once,
open it by URL in any process, and write and read regions. Writes go
through zarr.Array.WriteRegion: a region on the shard grid, each shard it
covers encoded whole and stored in one Put (a file written under a
temporary name and renamed), so that writing a region again writes the
same bytes, and a reader sees each shard whole or absent."""
import ctypes
import json

import numpy as np

from . import ArgumentError, _check, _errbuf, _ERRLEN, _jfloat, _lib

_I64P = ctypes.POINTER(ctypes.c_int64)
if hasattr(_lib, "ndconv_zarr_create"):  # a library before them has none
    _lib.ndconv_zarr_create.argtypes = [ctypes.c_char_p, _I64P, ctypes.c_char_p, ctypes.c_int]
    _lib.ndconv_zarr_create.restype = ctypes.c_int
    _lib.ndconv_zarr_open.argtypes = [ctypes.c_char_p, _I64P, ctypes.c_char_p, ctypes.c_int]
    _lib.ndconv_zarr_open.restype = ctypes.c_int
    _lib.ndconv_zarr_info.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    _lib.ndconv_zarr_info.restype = ctypes.c_int
    for _f in (_lib.ndconv_zarr_write_region, _lib.ndconv_zarr_read_region):
        _f.argtypes = [ctypes.c_int64, _I64P, _I64P, ctypes.c_int, ctypes.c_void_p, ctypes.c_int64,
                       ctypes.c_char_p, ctypes.c_int]
        _f.restype = ctypes.c_int
    _lib.ndconv_zarr_close.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_int]
    _lib.ndconv_zarr_close.restype = ctypes.c_int


def _need():
    if not hasattr(_lib, "ndconv_zarr_create"):
        raise RuntimeError("ndconv: this libndconv.so has no Zarr entry points; rebuild it (python/install.sh)")


def _ints(v):
    a = np.ascontiguousarray([int(x) for x in v], dtype=np.int64)
    return a, a.ctypes.data_as(_I64P)


class ZarrArray:
    """A Zarr array (v3, sharded or not, or v2) opened through ndconv's Zarr
    package. Make one with create() or open(); write(start, block) writes a
    region on the shard grid (see the module's doc), read(start, shape) any
    box. Handles are per process: each process opens the URL itself."""

    _handle = None

    def __init__(self, handle):
        self._handle = handle
        buf = ctypes.create_string_buffer(4096)
        errbuf = _errbuf()
        _check(_lib.ndconv_zarr_info(handle, buf, 4096, errbuf, _ERRLEN), errbuf)
        info = json.loads(buf.value)
        self.shape = tuple(info["shape"])
        self.dtype = np.dtype(info["dtype"])
        self.chunks = tuple(info["chunks"])
        self.shards = tuple(info["shards"])  # the unit stored under one key
        self.format = info["format"]

    @classmethod
    def create(cls, url, shape, dtype, chunks=None, shards=None, format=3, compressor="zstd", level=0,
               fill_value=0.0, resume=False):
        """Writes the metadata of a new array at url (a path or bucket URL
        with a component ending in .zarr; what was there is removed, unless
        resume is true and an array of this layout is there, whose shards
        are kept) and returns it open."""
        _need()
        spec = {"url": str(url), "shape": [int(s) for s in shape], "dtype": np.dtype(dtype).name,
                "chunks": None if chunks is None else [int(c) for c in chunks],
                "shards": None if shards is None else [int(s) for s in shards],
                "format": int(format), "compressor": compressor or "", "level": int(level),
                "fill_value": _jfloat(fill_value), "resume": bool(resume)}
        h = ctypes.c_int64()
        errbuf = _errbuf()
        _check(_lib.ndconv_zarr_create(json.dumps(spec).encode(), ctypes.byref(h), errbuf, _ERRLEN), errbuf)
        return cls(h.value)

    @classmethod
    def open(cls, url):
        """The array at url, open to read and write."""
        _need()
        h = ctypes.c_int64()
        errbuf = _errbuf()
        _check(_lib.ndconv_zarr_open(str(url).encode(), ctypes.byref(h), errbuf, _ERRLEN), errbuf)
        return cls(h.value)

    def _live(self):
        if self._handle is None:
            raise ValueError("invalid Zarr array: it is closed")
        return self._handle

    def write(self, start, block):
        """Writes block at start: a region whose edges lie on the shard grid
        (or at the array's end). block is converted to the array's dtype
        where it differs (as numpy's astype)."""
        h = self._live()
        b = np.asarray(block)
        if b.ndim != len(self.shape):
            raise ArgumentError("invalid block: %d axes for an array of %d" % (b.ndim, len(self.shape)))
        b = np.ascontiguousarray(b, dtype=self.dtype.newbyteorder("="))
        st, stp = _ints(start)
        sh, shp = _ints(b.shape)
        errbuf = _errbuf()
        _check(_lib.ndconv_zarr_write_region(h, stp, shp, b.ndim, b.ctypes.data, b.nbytes, errbuf, _ERRLEN), errbuf)

    def read(self, start=None, shape=None):
        """The box at start (default the origin) of shape (default the rest
        of the array), as a new numpy array."""
        h = self._live()
        start = [0] * len(self.shape) if start is None else [int(s) for s in start]
        if shape is None:
            shape = [n - s for n, s in zip(self.shape, start)]
        out = np.empty([int(s) for s in shape], self.dtype.newbyteorder("="))
        st, stp = _ints(start)
        sh, shp = _ints(out.shape)
        errbuf = _errbuf()
        _check(_lib.ndconv_zarr_read_region(h, stp, shp, out.ndim, out.ctypes.data, out.nbytes, errbuf, _ERRLEN),
               errbuf)
        return out

    def close(self):
        h, self._handle = self._handle, None
        if h is not None and _lib is not None:
            errbuf = ctypes.create_string_buffer(_ERRLEN)
            _check(_lib.ndconv_zarr_close(h, errbuf, _ERRLEN), errbuf)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "ndconv.ZarrArray(v%d %s %s, chunks %s, stored in %s%s)" % (
            self.format, self.dtype, self.shape, self.chunks, self.shards, "" if self._handle else ", closed")
