#!/usr/bin/env python3
"""Run once on the device machine, where tensorstore is installed:
python3 device.py OUT. It reads the v3 arrays our writer left in ours/
(TestWriteForDevice) with tensorstore and compares them with their .npy,
and writes small v3 fixtures with tensorstore (sharded, zstd, blosc, gzip,
crc32c, both byte orders, missing chunks) into OUT/ts with a manifest, to
be committed under testdata/ts/."""
import json
import os
import sys
import traceback

import numpy as np

out = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
try:
    import tensorstore as ts
    print('tensorstore', ts.__version__ if hasattr(ts, '__version__') else '?', 'numpy', np.__version__)
except Exception as e:
    print('NO TENSORSTORE', e)
    sys.exit(1)
try:
    import zarr
    print('zarr-python', zarr.__version__)
except Exception as e:
    print('no zarr-python:', e)


def spec(path, metadata=None, create=False):
    s = {'driver': 'zarr3', 'kvstore': {'driver': 'file', 'path': path}}
    if metadata:
        s['metadata'] = metadata
    if create:
        s['create'] = True
        s['delete_existing'] = True
    return s


# 1. Read ours.
ok = bad = 0
man = json.load(open(os.path.join(here, 'ours', 'manifest.json')))
for f in man:
    path = os.path.join(here, 'ours', f['root'], f['path'])
    try:
        got = ts.open(spec(path)).result().read().result()
        want = np.load(os.path.join(here, 'ours', f['npy']))
        same = got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)
        print('READ OURS', f['name'], 'OK' if same else 'MISMATCH', got.dtype, got.shape)
        if not same:
            print('  got', got.ravel()[:20], '\n  want', want.ravel()[:20])
        ok, bad = ok + same, bad + (not same)
    except Exception:
        bad += 1
        print('READ OURS', f['name'], 'ERROR')
        traceback.print_exc()
print('tensorstore read ours: %d ok, %d bad' % (ok, bad))

# 2. Write fixtures.
rng = np.random.default_rng(7)
tsdir = os.path.join(out, 'ts')
os.makedirs(tsdir, exist_ok=True)
manifest = []


def by(e):
    return {'name': 'bytes', 'configuration': {'endian': e}}


def shard(inner, codecs, loc='end', index=None):
    cfg = {'chunk_shape': inner, 'codecs': codecs,
           'index_codecs': index or [by('little'), {'name': 'crc32c'}]}
    if loc != 'end':
        cfg['index_location'] = loc
    return [{'name': 'sharding_indexed', 'configuration': cfg}]


def values(shape, dt):
    dt = np.dtype(dt)
    if dt.kind in 'iu':
        return rng.integers(max(np.iinfo(dt).min, -500), min(np.iinfo(dt).max, 500), shape, endpoint=True).astype(dt)
    if dt.kind == 'c':
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return (rng.standard_normal(shape) * 50).astype(dt)


def fixture(name, shape, dt, grid, codecs, fill, region=None, enc=None):
    root = name + '.zarr'
    md = {'shape': list(shape), 'data_type': dt, 'chunk_grid': {'name': 'regular', 'configuration': {'chunk_shape': grid}},
          'codecs': codecs, 'fill_value': fill}
    if enc:
        md['chunk_key_encoding'] = enc
    try:
        store = ts.open(spec(os.path.join(tsdir, root), md, create=True)).result()
        a = values(shape, dt)
        if region is None:
            store.write(a).result()
        else:
            store[region].write(a[region]).result()
        got = store.read().result()
        np.save(os.path.join(tsdir, name + '.npy'), got)
        manifest.append({'name': name, 'root': 'ts/' + root, 'path': '', 'npy': 'ts/' + name + '.npy', 'format': 3})
        print('WROTE', name)
    except Exception:
        print('WRITE', name, 'ERROR')
        traceback.print_exc()


zstd = {'name': 'zstd', 'configuration': {'level': 3, 'checksum': False}}
fixture('ts_shard_zstd_le', (20, 18, 16), 'uint16', [8, 8, 8], shard([4, 4, 4], [by('little'), zstd]), 7,
        region=np.s_[0:14, :, 3:16])
fixture('ts_shard_blosc_be_start', (17, 19), 'float32', [8, 12],
        shard([4, 6], [by('big'), {'name': 'blosc', 'configuration': {'cname': 'lz4', 'clevel': 5, 'shuffle': 'bitshuffle', 'typesize': 4, 'blocksize': 0}}], loc='start'),
        'NaN', region=np.s_[2:17, 0:13])
fixture('ts_shard_transpose_gzip_crc', (9, 10, 11), 'int64', [9, 10, 11],
        shard([3, 5, 11], [{'name': 'transpose', 'configuration': {'order': [2, 0, 1]}}, by('little'),
                           {'name': 'gzip', 'configuration': {'level': 6}}, {'name': 'crc32c'}]), -1)
fixture('ts_blosc_zstd_complex', (6, 7), 'complex64', [4, 4],
        [by('little'), {'name': 'blosc', 'configuration': {'cname': 'zstd', 'clevel': 3, 'shuffle': 'shuffle', 'typesize': 4, 'blocksize': 0}}], [0.0, 0.0])
fixture('ts_f16_shard_big_index', (10, 10), 'float16', [10, 10], shard([5, 5], [by('big'), zstd], index=[by('big')]), 0.5,
        region=np.s_[0:5, :])
fixture('ts_int8_v2keys', (13, 9), 'int8', [5, 4], [by('little'), zstd], 3,
        enc={'name': 'v2', 'configuration': {'separator': '.'}}, region=np.s_[0:10, 0:9])
fixture('ts_float64_big_crc', (7, 8), 'float64', [3, 3], [by('big'), {'name': 'crc32c'}], 'Infinity', region=np.s_[1:7, 2:8])
with open(os.path.join(tsdir, 'manifest.json'), 'w') as f:
    json.dump(manifest, f, indent=1)
print('wrote %d fixtures' % len(manifest))
