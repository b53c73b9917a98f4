"""Atomic writers leave ordinary files: complete content, and the permissions a plain open() would give."""

from __future__ import annotations

import os

from ttlab.provenance import atomic_write_bytes, atomic_write_json, default_file_mode


def test_atomic_files_get_the_umask_mode_not_mkstemps_private_one(tmp_path):
    old = os.umask(0o022)
    try:
        assert default_file_mode() == 0o644
        atomic_write_bytes(tmp_path / "a.bin", b"xyz")
        atomic_write_json(tmp_path / "sub" / "b.json", {"k": 1})
        for p in (tmp_path / "a.bin", tmp_path / "sub" / "b.json"):
            assert os.stat(p).st_mode & 0o777 == 0o644
        assert (tmp_path / "a.bin").read_bytes() == b"xyz" and not list(tmp_path.glob(".*.tmp"))
        os.umask(0o077)
        atomic_write_bytes(tmp_path / "c.bin", b"")
        assert os.stat(tmp_path / "c.bin").st_mode & 0o777 == 0o600
    finally:
        os.umask(old)


def test_atomic_file_keeps_the_old_file_when_the_writer_fails(tmp_path):
    import pytest

    from ttlab.provenance import atomic_file

    target = tmp_path / "ckpt.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_file(target) as fh:
            fh.write(b"half")
            raise RuntimeError("interrupted")
    assert target.read_bytes() == b"old" and not list(tmp_path.glob(".*.tmp"))
    with atomic_file(target) as fh:
        fh.write(b"new")
    assert target.read_bytes() == b"new"
