"""Device choice and multi-process data parallelism (``torchrun`` → DDP, gloo on CPU, NCCL on CUDA).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from ttlab.errors import TTLabInputError


@dataclass(frozen=True)
class DistInfo:
    """Where this process runs: rank, world size, device, and whether a process group is up."""

    rank: int = 0
    local_rank: int = 0
    world_size: int = 1
    device: str = "cpu"
    backend: str | None = None

    @property
    def is_main(self) -> bool:
        """True on rank 0 (the process that writes files)."""
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        """True when running under a process group with more than one process."""
        return self.world_size > 1


_INFO: DistInfo | None = None


def resolve_device(device: str = "auto", local_rank: int = 0) -> str:
    """``auto`` → ``cuda:LOCAL_RANK`` when CUDA is available, else ``cpu``; validates explicit choices."""
    if device == "auto":
        return f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        return "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise TTLabInputError(f"device {device!r} requested but CUDA is not available here; use device 'cpu'.",
                                  params=("device",))
        return device if ":" in device else f"cuda:{local_rank}"
    raise TTLabInputError(f"unknown device {device!r}; use auto, cpu, cuda or cuda:N.")


def init_distributed(device: str = "auto") -> DistInfo:
    """Set up (once) the process group when launched by ``torchrun`` with WORLD_SIZE > 1."""
    global _INFO
    if _INFO is not None:
        return _INFO
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1 or "RANK" not in os.environ:
        _INFO = DistInfo(device=resolve_device(device))
        return _INFO
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    dev = resolve_device(device, local_rank)
    backend = "nccl" if dev.startswith("cuda") else "gloo"
    if dev.startswith("cuda"):
        torch.cuda.set_device(dev)
    if not dist.is_initialized():
        dist.init_process_group(backend=backend)
    _INFO = DistInfo(rank=rank, local_rank=local_rank, world_size=world, device=dev, backend=backend)
    return _INFO


def barrier() -> None:
    """Wait for all ranks (no-op without a process group)."""
    if _INFO is not None and _INFO.enabled:
        import torch.distributed as dist

        dist.barrier()


def shutdown() -> None:
    """Tear down the process group, if this module set one up."""
    global _INFO
    if _INFO is not None and _INFO.enabled:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()
    _INFO = None
