"""Columns from Python: Arrow arrays that pyarrow accepts without a full validation."""

import numpy as np
import pyarrow as pa
import pytest

import pocketdex

TEXTS = [
    "the first document is about rivers and the mountains they come down from",
    "the second document is about ships and the harbours they sail into",
]


def test_an_invalid_arrow_array_is_refused_not_read():
    # Offsets that go backwards: pyarrow's cheap validation (all from_buffers runs) lets them
    # through; reading them would read outside the buffer.
    offsets = pa.py_buffer(np.array([0, 5, 3], dtype=np.int32).tobytes())
    bad = pa.Array.from_buffers(pa.string(), 2, [None, offsets, pa.py_buffer(b"hello")])
    with pytest.raises(ValueError, match="texts: cannot import the Arrow array"):
        pocketdex.Fingerprinter().fingerprint_batch(bad)
    with pytest.raises(ValueError, match="ids: cannot import the Arrow array"):
        pocketdex.IndexBuilder().add_batch(bad, TEXTS)
    # A string array of bytes that are not UTF-8 (`view` does not check them).
    not_utf8 = pa.array([b"caf\xe9 au lait", b"ok"], pa.binary()).view(pa.string())
    with pytest.raises(ValueError, match="texts: cannot import the Arrow array"):
        pocketdex.dups(["a", "b"], not_utf8)
    with pytest.raises(ValueError, match="texts: cannot import the Arrow array"):
        pocketdex.IndexBuilder().add_batch(["a", "b"], pa.chunked_array([not_utf8]))

