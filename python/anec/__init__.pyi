# Type stubs of the package anec (python/anec/__init__.py over the extension _anec).
import os
import pathlib
from typing import Any, Literal, Mapping, Protocol, overload

import numpy as np
import numpy.typing as npt

_Path = str | os.PathLike[str]
_Dims = Mapping[str, int] | None

class _SerializesToOnnx(Protocol):  # onnx.ModelProto
    def SerializeToString(self) -> bytes: ...

_Model = _Path | bytes | bytearray | memoryview | _SerializesToOnnx

class Error(Exception):
    """A failure of the libraries, with its reason code."""

    code: str  # ANEC-<AREA>-<NNN>
    message: str  # the text after the code

class Provenance:
    """Where a value comes from and how sure it is."""

    @property
    def source(self) -> str: ...
    @property
    def confidence(self) -> str: ...  # measured, decoded, predicted, inferred, placeholder

class Target:
    """One target's table: every field is an attribute of its own type."""

    @property
    def name(self) -> str: ...
    @property
    def aliases(self) -> list[str]: ...
    @property
    def fields(self) -> list[str]: ...
    def provenance(self, field: str) -> Provenance: ...
    def describe(self, field: str) -> dict[str, str]: ...  # section, unit, meaning, source
    def __getattr__(self, field: str) -> int | float | str | bool | list[str] | bytes: ...
    def __getitem__(self, field: str) -> int | float | str | bool | list[str] | bytes: ...
    def __contains__(self, field: str) -> bool: ...

def set_tables(path: _Path | None) -> None: ...
def tables() -> pathlib.Path: ...
def targets() -> list[str]: ...
def target(name: str) -> Target: ...
@overload
def check(model: _Model, target: Literal["all"], dims: _Dims = None) -> list[dict[str, Any]]: ...
@overload
def check(model: _Model, target: str = "h13", dims: _Dims = None) -> dict[str, Any]: ...
@overload
def estimate(model: _Model, target: Literal["all"], dims: _Dims = None,
             cost_model: Literal["calibrated", "analytic"] = "calibrated",
             calibration: _Path | None = None) -> list[dict[str, Any]]: ...
@overload
def estimate(model: _Model, target: str = "h13", dims: _Dims = None,
             cost_model: Literal["calibrated", "analytic"] = "calibrated",
             calibration: _Path | None = None) -> dict[str, Any]: ...
@overload
def place(model: _Model, target: Literal["all"], dims: _Dims = None) -> list[dict[str, Any]]: ...
@overload
def place(model: _Model, target: str = "h13", dims: _Dims = None) -> dict[str, Any]: ...
def eval(model: _Model, inputs: Mapping[str, npt.ArrayLike] | None = None,
         precision: Literal["fp32", "fp16"] = "fp32", seed: int = 1,
         dims: _Dims = None) -> dict[str, np.ndarray]: ...
