"""Types of the extension module; the docstrings are on the objects themselves (help())."""

import os
from typing import Any, ClassVar, Iterable, List, Optional, Sequence, SupportsIndex, Tuple, Union, final

__all__ = [
    "__version__",
    "FORMAT_VERSION",
    "PocketdexError",
    "CorruptIndexError",
    "SignatureError",
    "BusyError",
    "DuplicateIdError",
    "IndexBuilder",
    "Index",
    "Hit",
    "Fingerprinter",
    "Fingerprint",
    "Cluster",
    "Dups",
    "fingerprint",
    "dups",
    "methods",
    "create_set",
    "adopt_segments",
    "add",
    "delete",
    "check",
    "merge",
    "repair",
]

__version__: str
FORMAT_VERSION: int

# A column of values: a list or any iterable, or a pyarrow Array / ChunkedArray.
_Column = Union[Iterable[Optional[str]], Any]
_IdColumn = Union[Iterable[Union[str, SupportsIndex, None]], Any]
# Titles may also be numbers and booleans: their text.
_TitleColumn = Union[Iterable[Union[str, int, float, bool, None]], Any]
_StrPath = Union[str, "os.PathLike[str]"]

class PocketdexError(Exception): ...
class CorruptIndexError(PocketdexError): ...
class SignatureError(PocketdexError): ...
class BusyError(PocketdexError): ...
class DuplicateIdError(PocketdexError):
    ids: List[str]
    count: int

@final
class IndexBuilder:
    def __new__(
        cls,
        lang: str = "en",
        *,
        expected_docs: Optional[int] = None,
        size_hint: Optional[int] = None,
        idf: _StrPath = "collection",
        resolution: Union[Tuple[int, int, int], Tuple[int, int, int, Optional[int]], None] = None,
        similar_bands: Optional[int] = None,
    ) -> "IndexBuilder": ...
    @staticmethod
    def like(index: Union[_StrPath, bytes], *, segment: bool = False) -> "IndexBuilder": ...
    def add(self, id: Union[str, SupportsIndex], text: str, title: Optional[str] = None) -> Optional[int]: ...
    def add_batch(
        self, ids: _IdColumn, texts: _Column, titles: Optional[_TitleColumn] = None
    ) -> int: ...
    def write(self, path: _StrPath) -> dict[str, Any]: ...
    def to_bytes(self) -> bytes: ...
    @property
    def skipped(self) -> List[Tuple[str, str]]: ...
    def __len__(self) -> int: ...

@final
class Hit:
    def __new__(
        cls,
        id: str,
        score: float,
        rank: int,
        codes: int,
        path: str,
        title: Optional[str] = None,
        index: Optional[str] = None,
    ) -> "Hit": ...
    def __reduce__(
        self,
    ) -> Tuple[type, Tuple[str, float, int, int, str, Optional[str], Optional[str]]]: ...
    def __hash__(self) -> int: ...
    @property
    def id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def rank(self) -> int: ...
    @property
    def codes(self) -> int: ...
    @property
    def path(self) -> str: ...
    @property
    def title(self) -> Optional[str]: ...
    @property
    def index(self) -> Optional[str]: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class Index:
    def __new__(
        cls, path: Union[_StrPath, Sequence[_StrPath]], *, public_key: Optional[_StrPath] = None
    ) -> "Index": ...
    def query(
        self,
        text: str,
        *,
        top: int = 100,
        threshold: Optional[float] = None,
        similar: bool = False,
    ) -> List[Hit]: ...
    def query_batch(
        self,
        texts: _Column,
        *,
        top: int = 100,
        threshold: Optional[float] = None,
        similar: bool = False,
    ) -> List[List[Hit]]: ...
    def fingerprint(self, text: str) -> "Fingerprint": ...
    def info(self) -> dict[str, Any]: ...
    def verify(self) -> None: ...
    def __len__(self) -> int: ...
    def __contains__(self, id: object, /) -> bool: ...

@final
class Fingerprint:
    def __new__(cls, codes: Sequence[int], sketch: Sequence[int], terms: int) -> "Fingerprint": ...
    def __reduce__(self) -> Tuple[type, Tuple[List[int], List[int], int]]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    @property
    def codes(self) -> List[int]: ...
    @property
    def sketch(self) -> List[int]: ...
    @property
    def terms(self) -> int: ...
    def similarity(self, other: "Fingerprint") -> float: ...

@final
class Fingerprinter:
    def __new__(cls, lang: str = "en", *, expected_docs: int = 1_000_000) -> "Fingerprinter": ...
    def fingerprint(self, text: str) -> Fingerprint: ...
    def fingerprint_batch(self, texts: _Column) -> List[Optional[Fingerprint]]: ...

def fingerprint(text: str, *, lang: str = "en", expected_docs: int = 1_000_000) -> Fingerprint: ...
def methods() -> List[Tuple[str, float, str]]: ...

@final
class Cluster:
    def __new__(
        cls,
        id: int,
        members: Sequence[str],
        rows: Sequence[int],
        representative: str,
        pairs: Sequence[Tuple[str, str, float]],
    ) -> "Cluster": ...
    def __reduce__(
        self,
    ) -> Tuple[type, Tuple[int, List[str], List[int], str, List[Tuple[str, str, float]]]]: ...
    def __eq__(self, value: object, /) -> bool: ...
    # Mutable lists inside: a cluster keys no dict and joins no set.
    __hash__: ClassVar[None]  # type: ignore[assignment]
    @property
    def id(self) -> int: ...
    @property
    def members(self) -> List[str]: ...
    @property
    def rows(self) -> List[int]: ...
    @property
    def representative(self) -> str: ...
    @property
    def pairs(self) -> List[Tuple[str, str, float]]: ...
    def __len__(self) -> int: ...

@final
class Dups:
    @property
    def clusters(self) -> List[Cluster]: ...
    @property
    def is_duplicate(self) -> List[bool]: ...
    @property
    def keep(self) -> List[bool]: ...
    @property
    def set_aside(self) -> List[Tuple[str, str]]: ...
    @property
    def method(self) -> str: ...
    @property
    def threshold(self) -> float: ...
    def to_arrow(self) -> Any: ...
    def __len__(self) -> int: ...

def dups(
    ids: _IdColumn,
    texts: _Column,
    *,
    method: str = "minhash",
    threshold: Optional[float] = None,
    lang: str = "en",
    verify: bool = True,
) -> Dups: ...
def create_set(
    path: _StrPath,
    *,
    lang: str = "en",
    expected_docs: int = 1_000_000,
    idf: _StrPath = "language",
    wait: bool = False,
) -> bytes: ...
def adopt_segments(path: _StrPath, files: Union[_StrPath, Sequence[_StrPath]], *, wait: bool = False) -> int: ...
def add(
    path: _StrPath,
    ids: _IdColumn,
    texts: _Column,
    titles: Optional[_TitleColumn] = None,
    *,
    replace: bool = False,
    lang: Optional[str] = None,
    expected_docs: Optional[int] = None,
    idf: Optional[_StrPath] = None,
    wait: bool = False,
) -> dict[str, Any]: ...
def delete(path: _StrPath, ids: Union[str, SupportsIndex, _IdColumn], *, wait: bool = False) -> List[bool]: ...
def check(
    path: _StrPath,
    texts: _Column,
    ids: Optional[_IdColumn] = None,
    titles: Optional[_TitleColumn] = None,
    *,
    threshold: float = 0.8,
    top: int = 10,
    add: bool = False,
    replace: bool = False,
    lang: Optional[str] = None,
    expected_docs: Optional[int] = None,
    idf: Optional[_StrPath] = None,
    wait: bool = False,
) -> List[dict[str, Any]]: ...
def merge(path: _StrPath, out: Optional[_StrPath] = None, *, wait: bool = False) -> dict[str, Any]: ...
def repair(path: _StrPath, *, wait: bool = False) -> dict[str, Any]: ...
