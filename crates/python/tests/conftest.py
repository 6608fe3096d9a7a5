"""Shared fixtures: the repository's sample documents and the `pocketdex` command line, the
oracle the package is checked against (its own tests check it against brute force)."""

import json
import os
import subprocess
from pathlib import Path
from typing import List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "wiki-en"
QUERIES = ROOT / "samples" / "query"


def _cli_path() -> Path:
    given = os.environ.get("POCKETDEX_BIN")
    path = Path(given) if given else ROOT / "target" / "release" / "pocketdex"
    if not path.is_file():
        pytest.fail(
            f"the pocketdex binary is not at {path}: run `cargo build --release` first "
            "or set POCKETDEX_BIN"
        )
    return path


@pytest.fixture(scope="session")
def cli():
    """Runs the pocketdex command line; returns its stdout (fails on a non-zero exit)."""
    path = _cli_path()

    def run(*args: str, ok=(0,)) -> str:
        p = subprocess.run([str(path), *args], capture_output=True, text=True)
        assert p.returncode in ok, f"pocketdex {' '.join(args)}: exit {p.returncode}\n{p.stderr}"
        return p.stdout

    return run


def read_samples() -> Tuple[List[str], List[str]]:
    """The sample documents as `pocketdex build samples/wiki-en` reads them: ids are file names,
    in the order of a sorted walk."""
    ids, texts = [], []
    for path in sorted(SAMPLES.rglob("*")):
        if path.is_file():
            ids.append(path.relative_to(SAMPLES).as_posix())
            texts.append(path.read_bytes().decode("utf-8", errors="replace"))
    return ids, texts


@pytest.fixture(scope="session")
def samples() -> Tuple[List[str], List[str]]:
    return read_samples()


def json_lines(out: str) -> list:
    return [json.loads(line) for line in out.splitlines() if line.strip()]
