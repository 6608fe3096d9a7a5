"""Columns from Python: Arrow arrays that pyarrow accepts without a full validation, and
arrays of pyarrow's null type."""

from pathlib import Path

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


def test_strings_that_are_not_utf8_are_read_as_build_reads_them():
    # A string array of bytes that are not UTF-8 (`view` does not check them; Spark writes
    # such strings unchecked): each invalid sequence is replaced, as `pocketdex build` replaces
    # it in a Parquet file, and the other rows are read as they are.
    raw = [b"caf\xe9 au lait " + TEXTS[0].encode(), TEXTS[1].encode()]
    not_utf8 = pa.array(raw, pa.binary()).view(pa.string())
    lossy = [r.decode("utf-8", "replace") for r in raw]
    f = pocketdex.Fingerprinter()
    assert f.fingerprint_batch(not_utf8) == f.fingerprint_batch(lossy)
    # The copy "c" of the first row, found alike both ways.
    with_copy = pa.concat_arrays([not_utf8, pa.array([lossy[0]])])
    found = pocketdex.dups(["a", "b", "c"], with_copy)
    assert found.to_arrow().equals(pocketdex.dups(["a", "b", "c"], lossy + lossy[:1]).to_arrow())
    assert found.to_arrow().num_rows > 0
    for column in [not_utf8, pa.chunked_array([not_utf8[:1], not_utf8[1:]])]:
        b = pocketdex.IndexBuilder()
        assert b.add_batch(pa.array([b"a\xff", b"b"], pa.binary()).view(pa.string()), column) == 2
        plain = pocketdex.IndexBuilder()
        plain.add_batch(["a\ufffd", "b"], lossy)
        assert b.to_bytes() == plain.to_bytes()


def test_columns_of_the_types_a_parquet_file_may_have():
    # Titles that are numbers or booleans are their text, ids may be bytes, as in `build`.
    b = pocketdex.IndexBuilder()
    titles = pa.array([1.5, 3.0])
    assert b.add_batch(pa.array([b"a", b"b"]), TEXTS, titles) == 2
    plain = pocketdex.IndexBuilder()
    plain.add_batch(["a", "b"], TEXTS, ["1.5", "3"])
    assert b.to_bytes() == plain.to_bytes()
    assert pocketdex.IndexBuilder().add_batch(["a", "b"], TEXTS, pa.array([True, False])) == 2
    # Integer titles too, of every width (a Parquet file's int64 `title` reads so in `build`).
    for t in [pa.int64(), pa.int32(), pa.uint64()]:
        numbered = pocketdex.IndexBuilder()
        assert numbered.add_batch(["a", "b"], TEXTS, pa.array([5, 7], t)) == 2
        plain = pocketdex.IndexBuilder()
        plain.add_batch(["a", "b"], TEXTS, ["5", "7"])
        assert numbered.to_bytes() == plain.to_bytes()
    with pytest.raises(TypeError, match="texts must be an Arrow column of strings or bytes, not Float64"):
        pocketdex.IndexBuilder().add_batch(["a", "b"], pa.array([1.0, 2.0]))
    # A list's numbers and booleans are titles as an Arrow column's are.
    for values in [[1.5, 3.0], [5, 7], [True, False], list(np.array([5, 7])), list(np.array([True, False]))]:
        listed = pocketdex.IndexBuilder()
        listed.add_batch(["a", "b"], TEXTS, values)
        arrow = pocketdex.IndexBuilder()
        arrow.add_batch(["a", "b"], TEXTS, pa.array(values))
        assert listed.to_bytes() == arrow.to_bytes()
    with pytest.raises(TypeError, match="titles must hold str, int, float or bool values, not bytes"):
        pocketdex.IndexBuilder().add_batch(["a", "b"], TEXTS, [b"x", "y"])


def test_ids_no_one_could_print_or_delete_are_refused():
    with pytest.raises(ValueError, match="blank or holds control characters") as e:
        pocketdex.IndexBuilder().add(" ", TEXTS[0])
    # add() takes no None for an id (add_batch names such a row by its number): not offered.
    assert "None" not in str(e.value)
    b = pocketdex.IndexBuilder()
    with pytest.raises(ValueError, match=r'row 1: id "b\\nc" is blank or holds control'):
        b.add_batch(["a", "b\nc"], TEXTS)
    # The rows before the bad one are added, as for a value that cannot be read.
    one = pocketdex.IndexBuilder()
    one.add_batch(["a"], TEXTS[:1])
    assert b.to_bytes() == one.to_bytes()



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
    assert b.skipped == [("c", "no text (a null)"), ("d", "no text (a null)")]
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


def test_a_bad_value_ends_the_batch_at_its_row_keeping_the_rows_before(tmp_path):
    # More rows than one step (4,096), the bad one in the third: every row before it is
    # added, none after, the error names its row, and later "row N" ids go on from there.
    texts = [f"document number {i} tells of rivers, harbours and mountains {i}" for i in range(9000)]
    bad = list(texts)
    bad[8500] = 123
    b = pocketdex.IndexBuilder()
    with pytest.raises(TypeError, match=r"row 8500: texts must hold str values, not int; the rows before it were added"):
        b.add_batch([None] * len(bad), bad)
    assert len(b) == 8500
    assert b.add_batch([None], ["one more document about ships and the sea"]) == 1
    b.write(tmp_path / "x.pdx")
    index = pocketdex.Index(tmp_path / "x.pdx")
    assert "row 8499" in index and "row 8500" in index and "row 8501" not in index
    # A bad id in the first step: nothing before it but the rows before it.
    b = pocketdex.IndexBuilder()
    with pytest.raises(TypeError, match=r"row 1: an id is a str or an int, not float"):
        b.add_batch(["a", 2.5, "c"], TEXTS + ["third"])
    assert len(b) == 1


def test_dictionary_arrays_missing_values_and_surrogates():
    # A categorical id column and dictionary-encoded texts (pq.read_table(read_dictionary=…)):
    # read as their values, as the CLI reads the same Parquet file.
    ids = pa.array(["a", "b"]).dictionary_encode()
    texts = pa.array(TEXTS).dictionary_encode()
    plain, encoded = pocketdex.IndexBuilder(), pocketdex.IndexBuilder()
    assert plain.add_batch(["a", "b"], TEXTS) == 2
    assert encoded.add_batch(ids, pa.chunked_array([texts])) == 2
    assert plain.to_bytes() == encoded.to_bytes()
    # pandas' missing values (pd.NA, NaN) mean what None means: a missing id or text.
    b = pocketdex.IndexBuilder()
    assert b.add_batch(["a", "b", "c"], [TEXTS[0], float("nan"), TEXTS[1]]) == 2
    assert b.skipped == [("b", "no text (a null)")]
    # A str of lone surrogates (os.fsdecode of invalid bytes) is said to be one.
    with pytest.raises(ValueError, match="lone surrogates"):
        pocketdex.IndexBuilder().add_batch(["ok", "caf\udce9.txt"], TEXTS)


def test_os_errors_have_errno_and_filename_and_like_takes_a_set(tmp_path):
    import errno

    with pytest.raises(FileNotFoundError) as e:
        pocketdex.Index(tmp_path / "missing.pdx")
    assert e.value.errno == errno.ENOENT
    assert e.value.filename.endswith("missing.pdx")
    # An empty path (an unset setting) would make the working directory a set: refused.
    with pytest.raises(ValueError, match="the path is empty"):
        pocketdex.create_set("")
    assert not (Path.cwd() / "pocketdex-set.json").exists()
    # like() of a set follows its schema, as `build --segment-of SET` does.
    pocketdex.create_set(tmp_path / "my.set")
    piece = pocketdex.IndexBuilder.like(tmp_path / "my.set", segment=True)
    assert piece.add_batch(["a", "b"], TEXTS) == 2
    piece.write(tmp_path / "piece.pdx")
    assert pocketdex.adopt_segments(tmp_path / "my.set", [tmp_path / "piece.pdx"]) == 2
    # Written among the set's own files, it would replace one (or be removed as a leftover).
    segment = next((tmp_path / "my.set").glob("seg-*.pdx"))
    before = segment.read_bytes()
    again = pocketdex.IndexBuilder.like(tmp_path / "my.set", segment=True)
    again.add("c", TEXTS[0])
    with pytest.raises(ValueError, match="must be outside the index set"):
        again.write(segment)
    assert segment.read_bytes() == before


def test_more_documents_than_the_size_hint_are_warned_of(tmp_path):
    texts = [f"document {i} about the crab {i * 7} of tide pool {i % 13}" for i in range(40)]
    within = pocketdex.IndexBuilder(size_hint=40)
    within.add_batch([str(i) for i in range(40)], texts)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        within.write(tmp_path / "within.pdx")
    over = pocketdex.IndexBuilder(size_hint=10)
    over.add_batch([str(i) for i in range(40)], texts)
    # Warned of before the builder is spent: a warning made an error leaves it to write.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match=r"40 documents were added with size_hint=10"):
            over.to_bytes()
    assert len(over) == 40
    with pytest.warns(UserWarning, match=r"40 documents were added with size_hint=10"):
        assert over.to_bytes()


def test_create_set_waits_for_another_writer_when_asked(tmp_path):
    import fcntl
    import threading
    import time

    target = tmp_path / "busy.set"
    target.mkdir()
    # Another writer holds the set's lock (as a process creating it would).
    with open(target / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(pocketdex.BusyError, match=r"another writer \(another process, or another thread of this one\).*\(wait=True\)"):
            pocketdex.create_set(target)
        made: list = []
        waiter = threading.Thread(target=lambda: made.append(pocketdex.create_set(target, wait=True)))
        waiter.start()
        time.sleep(0.3)
        assert waiter.is_alive() and not made
        fcntl.flock(held, fcntl.LOCK_UN)
    waiter.join(30)
    assert len(made) == 1 and made[0] == (target / "schema.pdx").read_bytes()
    with pytest.raises(ValueError, match="is an index set already"):
        pocketdex.create_set(target, wait=True)


def test_argument_errors_say_what_is_expected(tmp_path):
    for bad in [(4, -1, 2), (300, 1, 2), (4, 1), "4,1,2"]:
        with pytest.raises(TypeError, match=r"resolution must be a tuple \(bands, samples, rows\)"):
            pocketdex.IndexBuilder(resolution=bad)
    assert len(pocketdex.IndexBuilder(resolution=[4, 1, 2])) == 0
    # One path where a list is expected is a list of one.
    pocketdex.create_set(tmp_path / "s.set")
    piece = pocketdex.IndexBuilder.like(tmp_path / "s.set", segment=True)
    piece.add("only", TEXTS[0])
    piece.write(tmp_path / "p.pdx")
    assert pocketdex.adopt_segments(tmp_path / "s.set", str(tmp_path / "p.pdx")) == 1


def test_repeated_ids_are_warned_of_as_build_does(tmp_path):
    b = pocketdex.IndexBuilder()
    b.add_batch(["a", "a"], TEXTS)
    with pytest.warns(UserWarning, match=r'1 document\(s\) share an id with an earlier one \(first: "a"\)'):
        stats = b.write(tmp_path / "x.pdx")
    assert stats["repeated_ids"] == 1
    b = pocketdex.IndexBuilder()
    b.add_batch(["a", "b"], TEXTS)
    assert b.write(tmp_path / "y.pdx")["repeated_ids"] == 0


def test_the_callers_own_exception_passes_through_as_raised():
    # A generator reading files that raises UnicodeDecodeError (whose constructor takes five
    # arguments): the same exception reaches the caller, the rows before it added.
    def texts():
        yield TEXTS[0]
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    b = pocketdex.IndexBuilder()
    with pytest.raises(UnicodeDecodeError, match="invalid start byte"):
        b.add_batch(["a", "b"], texts())
    assert len(b) == 1
