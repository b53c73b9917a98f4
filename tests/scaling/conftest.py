"""Shared fixtures of the scaling tests."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture
def one_torch_thread():
    """Tiny models run fastest on one thread (and a loaded machine makes idle OpenMP threads costly); the thread
    count is restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
