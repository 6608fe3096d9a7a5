"""Index sets kept up to date from Python (add, delete, check, merge), checked against the
command line's commands of the same names on the sample documents."""

import fcntl
import os
import shutil
import threading
import time

import pytest

import pocketdex
from conftest import QUERIES, SAMPLES, json_lines


def one_build(cli, tmp_path, name="one.pdx"):
    """What `merge -o` of a set of every sample document must write: the build of them all."""
    out = tmp_path / name
    cli("build", str(SAMPLES), "-o", str(out), "--idf", "language", "--expected-docs", "1000000", "-q")
    return out


def test_add_in_batches_then_merge_writes_the_build_of_all(tmp_path, cli, samples):
    ids, texts = samples
    s = tmp_path / "archive"
    first = pocketdex.add(s, ids[:100], texts[:100])
    assert first["created"] and first["added"] == 100 and first["live_docs"] == 100
    assert first["skipped"] == []
    # A second and a third batch.
    second = pocketdex.add(s, ids[100:150], texts[100:150])
    third = pocketdex.add(s, ids[150:], texts[150:])
    assert not second["created"] and second["added"] == 50
    assert third["live_docs"] == len(ids) and third["generation"] > second["generation"]
    # The set answers as one build of every document, and exports it byte for byte.
    one = one_build(cli, tmp_path)
    edited = (QUERIES / "edited.txt").read_text()
    assert pocketdex.Index(s).query(edited) == pocketdex.Index(one).query(edited)
    exported = pocketdex.merge(s, out=tmp_path / "shipped.pdx")
    assert exported["docs"] == len(ids)
    # Copied codes do not say which path made them: no counts rather than zeros.
    assert exported["paths"] is None
    assert (tmp_path / "shipped.pdx").read_bytes() == one.read_bytes()
    # The CLI reads what Python wrote.
    assert json_lines(cli("info", str(s), "--json"))[0]["live_documents"] == len(ids)


def test_ids_are_unique_and_errors_add_nothing(tmp_path, samples):
    ids, texts = samples
    s = tmp_path / "archive"
    pocketdex.add(s, ids[:10], texts[:10])
    generation = pocketdex.Index(s).info()["generation"]
    with pytest.raises(pocketdex.DuplicateIdError, match=r"is already in the index set.*\(replace=True\)"):
        pocketdex.add(s, [ids[20], ids[3]], [texts[20], texts[3]])
    # One refusal names every held id of the batch.
    with pytest.raises(pocketdex.DuplicateIdError, match=rf'{ids[3]!r} is already in the index set \(and 2 more: "{ids[4]}", "{ids[5]}"\); give the new documents other ids'.replace("'", '"')) as e:
        pocketdex.add(s, ids[3:6], texts[3:6])
    # ... and says them as values too: the first few, and how many.
    assert (e.value.ids, e.value.count) == (ids[3:6], 3)
    with pytest.raises(pocketdex.DuplicateIdError) as e:
        pocketdex.add(s, ids[:10], texts[:10])
    assert e.value.count == 10 and e.value.ids == ids[:len(e.value.ids)] and 0 < len(e.value.ids) < 10
    with pytest.raises(ValueError, match="row 1: the id is None"):
        pocketdex.add(s, [ids[20], None], [texts[20], texts[21]])
    with pytest.raises(ValueError, match=r'all 2 were skipped \("a": empty; "b": no text \(empty after removing markup\)\)'):
        pocketdex.add(s, ["a", "b"], ["  ", "<p></p>"])
    with pytest.raises(ValueError, match="language en, not de"):
        pocketdex.add(s, ["x"], ["some text"], lang="de")
    assert pocketdex.Index(s).info()["generation"] == generation
    assert ids[20] not in pocketdex.Index(s)
    # replace=True: the held id takes the new text in the same step.
    r = pocketdex.add(s, [ids[3], "new"], [texts[30], texts[31]], replace=True)
    assert (r["added"], r["deleted"], r["live_docs"]) == (2, 1, 11)
    hits = pocketdex.Index(s).query(texts[30], top=1)
    assert hits[0].id == ids[3] and hits[0].score > 0.99
    assert all(h.id != ids[3] for h in pocketdex.Index(s).query(texts[3]))
    # Empty texts are skipped and said, the rest added.
    r = pocketdex.add(s, ["e", ids[40]], ["", texts[40]])
    assert r["added"] == 1 and r["skipped"] == [("e", "empty")]


def test_a_failed_first_add_leaves_no_set(tmp_path):
    s = tmp_path / "new"
    with pytest.raises(ValueError, match="no documents to add"):
        pocketdex.add(s, ["a"], [""])
    assert not s.exists()
    (tmp_path / "made").mkdir()
    with pytest.raises(ValueError, match="the id is None"):
        pocketdex.add(tmp_path / "made", [None], ["text"])
    assert list((tmp_path / "made").iterdir()) == []


def test_delete_then_merge(tmp_path, cli, samples):
    ids, texts = samples
    s = tmp_path / "archive"
    pocketdex.add(s, ids[:50], texts[:50])
    pocketdex.add(s, ids[50:60], texts[50:60])
    assert pocketdex.delete(s, [ids[0], "no such id", ids[55]]) == [True, False, True]
    assert pocketdex.delete(s, ids[1]) == [True]  # one str is one id
    # Ids are read as add reads them: ints in decimal, pyarrow arrays.
    pocketdex.add(s, [7, 8], texts[70:72])
    assert pocketdex.delete(s, [7]) == [True] and pocketdex.delete(s, 8) == [True]
    pa = pytest.importorskip("pyarrow")
    assert pocketdex.delete(s, pa.array([ids[2], "none"])) == [True, False]
    assert pocketdex.delete(s, [ids[2]]) == [False]
    index = pocketdex.Index(s)
    assert len(index) == 56 and ids[0] not in index and ids[3] in index
    assert all(h.id != ids[0] for h in index.query(texts[0]))
    merged = pocketdex.merge(s)
    assert (merged["segments"], merged["live_docs"]) == (1, 56)
    # The CLI agrees on what the set holds.
    assert len(json_lines(cli("info", str(s), "--json"))[0]["segments"]) == 1
    with pytest.raises(TypeError, match="an id is a str or an int, not float"):
        pocketdex.delete(s, [1.5])
    # Iterated, bytes would be ints: refused, as one str is taken as one id.
    with pytest.raises(TypeError, match="not one bytes value"):
        pocketdex.delete(s, b"x")
    with pytest.raises(TypeError, match="not one bytes value"):
        pocketdex.add(s, b"ab", texts[:2])
    np = pytest.importorskip("numpy")
    pocketdex.add(s, [9], [texts[72]])
    assert pocketdex.delete(s, np.int64(9)) == [True]


def test_the_files_a_set_function_refuses(tmp_path, cli, samples):
    one = one_build(cli, tmp_path)
    with pytest.raises(ValueError, match="is an index file, which never changes"):
        pocketdex.add(one, ["a"], ["text"])
    with pytest.raises(ValueError, match="is already one index file"):
        pocketdex.merge(one)
    with pytest.raises(FileNotFoundError):
        pocketdex.delete(tmp_path / "nothing", ["a"])
    with pytest.raises(ValueError, match="check\\(add=True\\) needs ids"):
        pocketdex.check(tmp_path / "s", ["text"], add=True)
    with pytest.raises(ValueError, match="threshold must be between 0 and 1"):
        pocketdex.check(one, ["text"], threshold=1.5)
    (tmp_path / "plain").mkdir()
    with pytest.raises(ValueError, match="is a directory but not an index set"):
        pocketdex.check(tmp_path / "plain", ["text"])
    with pytest.raises(FileNotFoundError, match=r"create one with pocketdex\.add\(path, ids, texts\)"):
        pocketdex.merge(tmp_path / "nothing")
    with pytest.raises(ValueError, match="cannot learn its idf table"):
        pocketdex.add(tmp_path / "s", ["a"], ["text"], idf="collection")
    with pytest.raises(ValueError, match="replace applies to an index set"):
        pocketdex.check(one, ["text"], replace=True)
    with pytest.raises(FileNotFoundError):
        pocketdex.check(tmp_path / "nothing", ["text"], replace=True)


def test_a_process_forked_while_a_writer_holds_the_lock_does_not_keep_it(tmp_path, samples):
    ids, texts = samples
    s = tmp_path / "archive"
    children = []

    def rows():
        # Read while the call that creates the set holds its lock.
        yield texts[0]
        pid = os.fork()
        if pid == 0:
            time.sleep(10)
            os._exit(0)
        children.append(pid)
        yield texts[1]

    try:
        pocketdex.add(s, ids[:2], rows())
        assert children
        # The child still lives, with the lock's file open: the lock is free all the same.
        assert pocketdex.add(s, [ids[2]], [texts[2]])["live_docs"] == 3
    finally:
        for pid in children:
            os.kill(pid, 9)
            os.waitpid(pid, 0)


def test_a_callers_exception_passes_through_and_adds_nothing(tmp_path, samples):
    ids, texts = samples
    s = tmp_path / "archive"
    pocketdex.add(s, ids[:5], texts[:5])

    class Mine(Exception):
        def __init__(self, code, detail):
            super().__init__(code, detail)
            self.code = code

    def rows():
        yield texts[5]
        raise Mine(7, "the upload broke")

    with pytest.raises(Mine) as e:
        pocketdex.add(s, ids[5:7], rows())
    assert e.value.code == 7
    assert len(pocketdex.Index(s)) == 5


def test_a_second_writer_is_busy_or_waits(tmp_path, samples):
    ids, texts = samples
    s = tmp_path / "archive"
    pocketdex.add(s, ids[:5], texts[:5])
    with open(s / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with pytest.raises(pocketdex.BusyError, match=r"wait=True"):
            pocketdex.add(s, [ids[5]], [texts[5]])
        with pytest.raises(pocketdex.BusyError):
            pocketdex.check(s, [texts[6]], [ids[6]], add=True)
        done = []
        waiter = threading.Thread(
            target=lambda: done.append(pocketdex.add(s, [ids[5]], [texts[5]], wait=True))
        )
        waiter.start()
        time.sleep(0.3)
        assert not done  # still waiting for the lock
        fcntl.flock(lock, fcntl.LOCK_UN)
    waiter.join(10)
    assert done and done[0]["live_docs"] == 6


def test_a_set_with_a_sample_idf(tmp_path, cli, samples):
    ids, texts = samples
    ref = tmp_path / "ref.pdx"
    b = pocketdex.IndexBuilder()
    b.add_batch(ids[::5], texts[::5])
    b.write(ref)
    s = tmp_path / "archive"
    pocketdex.add(s, ids, texts, idf=ref)
    # The CLI made the same set from the same table.
    cli("add", str(tmp_path / "by-cli"), str(SAMPLES), "--idf", str(ref), "-q")
    pocketdex.merge(s, out=tmp_path / "a.pdx")
    pocketdex.merge(tmp_path / "by-cli", out=tmp_path / "b.pdx")
    assert (tmp_path / "a.pdx").read_bytes() == (tmp_path / "b.pdx").read_bytes()
    # Given again it agrees; another table is refused.
    pocketdex.add(s, ["x"], [texts[0] + " more"], idf=ref)
    with pytest.raises(ValueError, match="another idf table"):
        pocketdex.add(s, ["y"], [texts[1] + " more"], idf="language")


def test_check_answers_as_the_cli(tmp_path, cli, samples):
    ids, texts = samples
    s = tmp_path / "archive"
    cli("add", str(s), str(SAMPLES), "-q")
    edited = QUERIES / "edited.txt"
    want = [r for r in json_lines(cli("check", str(s), str(edited), "--json", ok=(1,)))]
    got = pocketdex.check(s, [edited.read_text()], [edited.name])
    assert [{k: v for k, v in r.items() if k != "type"} for r in want] == got
    assert got[0]["status"] == "near-copy" and got[0]["added"] is False
    # An index file is checked the same way (no ids: named by row).
    one = one_build(cli, tmp_path)
    by_file = pocketdex.check(one, [edited.read_text()])
    assert by_file[0]["doc"] == "row 0" and by_file[0]["hits"] == got[0]["hits"]


def test_check_and_add(tmp_path, samples):
    ids, texts = samples
    s = tmp_path / "archive"
    # The first submission creates the set.
    first = pocketdex.check(s, [texts[0]], [ids[0]], add=True)
    assert first == [{"doc": ids[0], "status": "new", "added": True, "hits": []}]
    # A near copy is reported, not added; a new one is added. The second text of the call is
    # checked against the first one too.
    copy = texts[0].replace(".", ";", 3)
    v = pocketdex.check(s, [copy, texts[1], texts[1]], ["copy", ids[1], "again"], add=True)
    assert [(x["status"], x["added"]) for x in v] == [
        ("near-copy", False),
        ("new", True),
        ("near-copy", False),
    ]
    assert v[0]["hits"][0]["id"] == ids[0] and v[2]["hits"][0]["path"] == "submitted"
    index = pocketdex.Index(s)
    assert len(index) == 2 and "copy" not in index and ids[1] in index
    # An error in a call adds nothing of it.
    v = pocketdex.check(s, [texts[2], ""], [ids[2], "blank"], add=True)
    assert [(x["status"], x["added"]) for x in v] == [("new", False), ("error", False)]
    assert v[1]["message"] == "empty" and ids[2] not in pocketdex.Index(s)
    # Without add, a check of a set says what adding would say, of ids too.
    v = pocketdex.check(s, [texts[3], texts[4]], [ids[0], None])
    assert v[0]["status"] == "error" and "already in the set" in v[0]["message"]
    assert (v[1]["doc"], v[1]["status"]) == ("row 1", "error") and "None" in v[1]["message"]
    # A call that would have created the set and adds nothing leaves none.
    v = pocketdex.check(tmp_path / "new", [""], ["blank"], add=True)
    assert v[0]["status"] == "error" and not (tmp_path / "new").exists()
    # replace lets a revision take its own id: it is no near copy of what it replaces.
    v = pocketdex.check(s, [copy], [ids[0]], add=True, replace=True)
    assert (v[0]["status"], v[0]["added"]) == ("new", True)
    assert len(pocketdex.Index(s)) == 2


def test_a_new_set_before_its_first_documents(tmp_path, samples):
    ids, texts = samples
    s = tmp_path / "new"
    pocketdex.create_set(s)
    # A check without adding answers as one that adds would: each new, but a repeat of an
    # earlier text of the call.
    v = pocketdex.check(s, [texts[0], texts[1], texts[0]], ["a", "b", "c"])
    assert [x["status"] for x in v] == ["new", "new", "near-copy"]
    assert v[2]["hits"][0] == {"id": "a", "score": 1.0, "codes": v[2]["hits"][0]["codes"], "path": "submitted"}
    assert len(pocketdex.Index(s)) == 0
    # A new set takes another set's table (its schema's); a missing file is said to be one.
    copied = pocketdex.add(tmp_path / "copied", ids[:5], texts[:5], idf=s)
    assert copied["created"] and copied["added"] == 5
    with pytest.raises(FileNotFoundError, match=r"idf=.*missing\.pdx does not exist; give \"language\" or"):
        pocketdex.create_set(tmp_path / "other", idf=tmp_path / "missing.pdx")
    # No set inside another's directory; a file is named once in the refusal.
    with pytest.raises(ValueError, match="cannot lie inside the index set"):
        pocketdex.add(s / "inner", ids[:1], texts[:1])
    (tmp_path / "plain.txt").write_text("text")
    with pytest.raises(ValueError) as e:
        pocketdex.delete(tmp_path / "plain.txt", ["a"])
    assert str(e.value).count("plain.txt") == 1


def test_repair_drops_a_damaged_segment_as_the_cli_does(tmp_path, cli, samples):
    ids, texts = samples
    s = tmp_path / "archive"
    pocketdex.add(s, ids[:100], texts[:100])
    pocketdex.add(s, ids[100:110], texts[100:110])
    assert pocketdex.repair(s)["dropped"] == []
    newest = max(s.glob("seg-*.pdx"))
    # A byte of its sketches: the names, and so the ids to add again, can still be read.
    [sketches] = [x for x in pocketdex.Index(newest).info()["sections"] if x["name"] == "SKETCHES"]
    data = bytearray(newest.read_bytes())
    data[sketches["offset"] + sketches["len"] // 2] ^= 0x41
    newest.write_bytes(bytes(data))
    # The advice names Python's calls, not the command line's.
    with pytest.raises(pocketdex.CorruptIndexError) as e:
        pocketdex.Index(s).verify()
    assert "pocketdex.repair(path)" in str(e.value) and "`pocketdex" not in str(e.value)
    copy = tmp_path / "copy"
    shutil.copytree(s, copy)
    r = pocketdex.repair(s)
    [d] = r["dropped"]
    assert d["file"] == newest.name and d["live_docs"] == 10 and d["unread"] == 0
    assert d["why"].startswith("checksum mismatch")
    assert sorted(d["ids"]) == sorted(ids[100:110])
    assert r["live_docs"] == 100 and not r["schema_rewritten"]
    assert (s / "damaged" / newest.name).exists()
    pocketdex.Index(s).verify()
    # The command line's repair of the same damage drops the same.
    by_cli = json_lines(cli("repair", str(copy), "--json", ok=(1,)))[0]
    assert [x["ids"] for x in by_cli["dropped"]] == [d["ids"]]
    with pytest.raises(ValueError, match="one index file, which repair cannot mend"):
        pocketdex.repair(one_build(cli, tmp_path))
