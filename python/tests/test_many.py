"""correlate_many and convolve_many: each result equals the one-array
call's, bit for bit, in order, for arrays of mixed shapes and dtypes from
any iterable; one plan per kind (the plan cache)."""
import numpy as np
import pytest

import ndconv


def test_many_equals_one_at_a_time():
    rng = np.random.default_rng(27)
    w = rng.standard_normal((3, 5)).astype(np.float32)
    arrays = [rng.standard_normal((16, 12)).astype(np.float32), (rng.random((7, 9)) * 250).astype(np.uint8),
              rng.standard_normal((16, 12)).astype(np.float32), rng.standard_normal((5, 6))]
    for many, one in [(ndconv.correlate_many, ndconv.correlate), (ndconv.convolve_many, ndconv.convolve)]:
        got = many((a for a in arrays), w, mode="mirror", device="cpu")
        assert len(got) == len(arrays)
        for a, g in zip(arrays, got):
            want = one(a, w, mode="mirror", device="cpu")
            assert g.dtype == want.dtype and g.shape == want.shape
            assert g.tobytes() == want.tobytes()


def test_many_errors_name_the_problem():
    with pytest.raises(ndconv.ArgumentError):
        ndconv.correlate_many([np.zeros((4, 4))], np.ones((3, 3)), mode="bogus")
    assert ndconv.correlate_many([], np.ones(3)) == []
