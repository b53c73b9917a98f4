"""Reading point clouds from files: .npy, .npz, .pt/.pth, .csv, .tsv (rows = points); writing them (.npy), and a
sampled manifold of known dimension to a file (:func:`write_manifold`, ``ttlab id sample-manifold``).
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np

from ttlab.errors import TTLabInputError
from ttlab.intrinsic_dim.manifolds import sample_manifold, true_dimension
from ttlab.intrinsic_dim.validate import check_points

SUFFIXES = (".npy", ".npz", ".pt", ".pth", ".csv", ".tsv")


def _pick(container: dict[str, Any], key: str | None, path: Path) -> Any:
    keys = list(container)
    if key is None:
        if len(keys) == 1:
            return container[keys[0]]
        raise TTLabInputError(
            f"{path} holds {len(keys)} arrays ({', '.join(map(str, keys)) or 'none'}); choose one with key.",
            params=("key",))
    if key not in container:
        raise TTLabInputError(f"{path} has no array {key!r}; it holds: {', '.join(map(str, keys)) or 'nothing'}.")
    return container[key]


def _read_text(path: Path, delimiter: str) -> np.ndarray:
    try:
        rows = [line for line in path.read_text(encoding="utf-8-sig").splitlines() if line.strip() and not line.lstrip().startswith("#")]
    except UnicodeDecodeError as exc:
        raise TTLabInputError(f"{path} is not a text file ({exc.reason}).") from exc
    if not rows:
        raise TTLabInputError(f"{path} has no data rows.")

    def parse(line: str, lineno: int) -> list[float]:
        try:
            return [float(x) for x in line.split(delimiter)]
        except ValueError as exc:
            raise TTLabInputError(f"{path}, data line {lineno}: non-numeric value ({exc}).") from exc

    cells = rows[0].split(delimiter)
    numeric = [is_number(c) for c in cells]
    if all(numeric):
        first = True  # no header: the first row is data
    elif not any(numeric):
        first = None  # a header line (column names)
    else:
        raise TTLabInputError(
            f"{path}, line 1 mixes numbers and text ({rows[0][:80]!r}): it is neither a header of column names "
            "nor a data row. Fix that line (a header must name every column)."
        )
    body = rows if first is not None else rows[1:]
    if not body:
        raise TTLabInputError(f"{path} has a header but no data rows.")
    data = [parse(line, i + (1 if first is not None else 2)) for i, line in enumerate(body)]
    widths = {len(r) for r in data}
    if len(widths) > 1:
        raise TTLabInputError(f"{path}: rows have different numbers of columns ({sorted(widths)}).")
    return np.array(data, dtype=np.float64)


def is_number(cell: str) -> bool:
    """True when a text cell parses as a float (header detection in CSV/TSV files)."""
    try:
        float(cell)
    except ValueError:
        return False
    return True


def load_points(path: str | os.PathLike, key: str | None = None) -> np.ndarray:
    """Load an (n_points, n_features) array from ``path`` and validate it (:func:`check_points`).

    ``key`` selects the array in an .npz archive or in a dict saved with ``torch.save``.
    """
    path = Path(path)
    if not path.exists():
        raise TTLabInputError(f"no such file: {path}")
    if path.is_dir():
        raise TTLabInputError(f"{path} is a directory, not a data file.")
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise TTLabInputError(f"unsupported file type {suffix or '(none)'!r} for {path}; use one of {', '.join(SUFFIXES)}.")
    if path.stat().st_size == 0:
        raise TTLabInputError(f"{path} is empty (0 bytes).")
    if key is not None and suffix in (".npy", ".csv", ".tsv"):
        raise TTLabInputError(
            f"key {key!r} selects an array inside an .npz archive or a saved dict; a {suffix} file holds "
            "a single array. Drop key.", params=("key",))
    if suffix == ".npy":
        with path.open("rb") as fh:
            magic = fh.read(6)
        if magic != b"\x93NUMPY":
            raise TTLabInputError(
                f"{path} is not a NumPy .npy file (it does not start with the .npy magic bytes); "
                "save the points with numpy.save, or give the file the suffix of its real format."
            )
        try:
            arr = np.load(path, allow_pickle=False)
        except ValueError as exc:
            raise TTLabInputError(f"{path} could not be read as a numeric .npy array: {exc}") from exc
    elif suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as z:
                arr = np.asarray(_pick({k: z[k] for k in z.files}, key, path))
        except (ValueError, OSError) as exc:
            raise TTLabInputError(f"{path} could not be read as .npz: {exc}",
                                  params=getattr(exc, "params", ())) from exc  # _pick's error names key
    elif suffix in (".pt", ".pth"):
        import torch

        try:
            obj = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # torch raises many types for corrupt or unsafe files
            raise TTLabInputError(f"{path} could not be read with torch.load(weights_only=True): {exc}") from exc
        if isinstance(obj, dict):
            obj = _pick(obj, key, path)
        arr = obj
    else:
        arr = _read_text(path, "," if suffix == ".csv" else "\t")
    return check_points(arr, name=str(path))


def save_points(path: str | os.PathLike, X: np.ndarray) -> None:
    """Write the array ``X`` to ``path`` in NumPy's .npy format, atomically."""
    from ttlab.provenance import atomic_write_bytes

    buf = io.BytesIO()
    np.save(buf, X)
    atomic_write_bytes(Path(path), buf.getvalue())


SAMPLE_MEMORY_LIMIT_GIB = 4.0
""":func:`write_manifold` refuses a sample whose arrays would need more memory than this (GiB), before allocating."""


def sample_bytes(n: int, ambient: int, noise: float) -> int:
    """Bytes :func:`ttlab.intrinsic_dim.sample_manifold` holds at its peak: the n × ambient float64 points, and as
    much again for the noise (arithmetic, nothing allocated)."""
    return n * ambient * 8 * (2 if noise > 0 else 1)


def write_manifold(out: Path, name: str, d: int, ambient: int, n: int, *, noise: float = 0.0, seed: int = 0,
                   overwrite: bool = False, memory_limit_gib: float = SAMPLE_MEMORY_LIMIT_GIB) -> dict[str, Any]:
    """:func:`ttlab.intrinsic_dim.sample_manifold` written to the .npy file ``out`` (checked first; an existing
    file only with ``overwrite``; a sample above ``memory_limit_gib`` refused before any allocation); returns what
    was written (``out``, ``manifold``, ``d``, ``ambient``, ``n``, ``noise``, ``seed``, ``shape``)."""
    from ttlab.outputs import check_out_file
    from ttlab.validation import check_float, check_int

    check_out_file(out, suffixes=(".npy",), overwrite=overwrite)
    n, ambient = check_int(n, "n", 1), check_int(ambient, "ambient", 1)
    limit = check_float(memory_limit_gib, "memory_limit_gib", 0, lo_open=True)
    need = sample_bytes(n, ambient, noise if isinstance(noise, (int, float)) else 0.0)
    if need > limit * 2**30:
        raise TTLabInputError(f"{n:,} points × {ambient:,} coordinates need ≈ {need / 2**30:,.1f} GiB, above "
                              f"memory_limit_gib = {limit:g}; lower n or ambient, or raise memory_limit_gib",
                              params=("n", "ambient", "memory_limit_gib"))
    X = sample_manifold(name, d, ambient, n, noise=noise, seed=seed)
    save_points(out, X)
    return {"out": str(out), "manifold": name, "d": true_dimension(name, d), "ambient": ambient,
            "n": n, "noise": noise, "seed": seed, "shape": list(X.shape)}
