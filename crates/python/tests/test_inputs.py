"""Columns from Python: Arrow arrays that pyarrow accepts without a full validation, and
arrays of pyarrow's null type."""

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


def test_arrays_of_the_null_type_are_all_none():
    # pa.array([None, None]) is of pyarrow's null type: every value None.
    nulls = pa.array([None, None])
    assert nulls.type == pa.null()
    with_nulls = pocketdex.IndexBuilder()
    assert with_nulls.add_batch(["a", "b"], TEXTS, nulls) == 2
    plain = pocketdex.IndexBuilder()
    assert plain.add_batch(["a", "b"], TEXTS) == 2
    assert with_nulls.to_bytes() == plain.to_bytes()
    b = pocketdex.IndexBuilder()
    assert b.add_batch(pa.nulls(2), TEXTS) == 2
    assert b.add_batch(["c", "d"], pa.nulls(2)) == 0
    assert b.skipped == [("c", "empty"), ("d", "empty")]
    assert pocketdex.Fingerprinter().fingerprint_batch(pa.nulls(3)) == [None, None, None]


def test_none_ids_are_named_by_their_row_in_everything_added(tmp_path):
    more = [t.replace("document", "text") for t in TEXTS]
    b = pocketdex.IndexBuilder()
    assert b.add_batch([None, "named"], TEXTS) == 2
    assert b.add_batch(pa.array([None, None], pa.string()), more) == 2
    b.write(tmp_path / "x.pdx")
    index = pocketdex.Index(tmp_path / "x.pdx")
    # Rows are counted across calls: a second batch's None ids do not repeat the first's.
    assert [i for i in ["row 0", "named", "row 2", "row 3"] if i in index] == [
        "row 0",
        "named",
        "row 2",
        "row 3",
    ]
