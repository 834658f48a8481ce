# Type stubs of anec.fw (python/anec/fw.py).
import os
from typing import Any, Literal

_Data = str | os.PathLike[str] | bytes | bytearray | memoryview

class Violation:
    """A check that fired."""

    check: str
    code: str
    disposition: Literal["reject", "drop", "fault-and-reset", "warn"]
    status: int
    offset: int
    message: str
    def __init__(self, doc: dict[str, Any]) -> None: ...

class Verdict:
    """What the firmware does with a message."""

    doc: dict[str, Any]
    violations: list[Violation]
    disposition: Literal["accept", "reject", "drop", "fault-and-reset"]
    code: str | None
    def __init__(self, doc: dict[str, Any]) -> None: ...
    @property
    def accepted(self) -> bool: ...
    @property
    def decoded(self) -> bool: ...
    @property
    def size(self) -> int: ...
    @property
    def command(self) -> dict[str, Any]: ...
    def __bool__(self) -> bool: ...

def encode(command: dict[str, Any]) -> bytes: ...
def decode(data: _Data) -> dict[str, Any]: ...
def validate(data: _Data, channel: Literal["ring", "exeloop"] = "ring") -> Verdict: ...
