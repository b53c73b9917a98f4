"""Fixtures for the language-model tests: tiny corpora, tiny token datasets, tiny models."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

# Hugging Face libraries must never reach the network in the tests.
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

WORDS = ("the union congress nation people state law war peace trade money year public government "
         "great country power duty time treaty army navy report interest service system").split()


def make_texts(n_docs: int = 30, seed: int = 0, words_per_doc: tuple[int, int] = (40, 120)) -> list[str]:
    """Deterministic pseudo-prose documents with paragraphs."""
    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        sentences = []
        for _ in range(rng.randint(*words_per_doc) // 8):
            ws = [rng.choice(WORDS) for _ in range(rng.randint(4, 12))]
            sentences.append(" ".join(ws).capitalize() + ".")
        docs.append(" ".join(sentences))
    return docs


@pytest.fixture
def texts() -> list[str]:
    return make_texts()


def pattern_docs(n_docs: int, length: int, vocab: int, seed: int, noise: float = 0.05) -> list[list[int]]:
    """Learnable token documents: x[t+1] = (3·x[t] + 1) mod (vocab-1), with a little noise."""
    rng = np.random.default_rng(seed)
    docs = []
    for _ in range(n_docs):
        x = [int(rng.integers(vocab - 1))]
        for _ in range(length - 1):
            nxt = (3 * x[-1] + 1) % (vocab - 1)
            if rng.random() < noise:
                nxt = int(rng.integers(vocab - 1))
            x.append(nxt)
        docs.append(x)
    return docs


@pytest.fixture
def token_data(tmp_path):
    """A synthetic token dataset (vocab 32, eot id 31) written straight to disk."""
    from ttlab.lm.data import write_token_dataset

    vocab = 32
    docs = {"train": pattern_docs(40, 200, vocab, 0), "val": pattern_docs(6, 200, vocab, 1),
            "test": pattern_docs(6, 200, vocab, 2)}
    return write_token_dataset(tmp_path / "data", docs, vocab_size=vocab, eot_id=vocab - 1)


@pytest.fixture
def tiny_model_cfg():
    from ttlab.lm.configs import GPTConfig

    return GPTConfig(vocab_size=32, block_size=16, n_layer=1, n_head=2, n_embd=32)


@pytest.fixture
def tiny_train_cfg():
    from ttlab.lm.configs import TrainConfig

    return TrainConfig(batch_size=8, max_iters=40, lr=3e-3, warmup_iters=5, eval_interval=10, eval_iters=4,
                       device="cpu", seed=0, threads=1)


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Tiny models run fastest on one thread, and do not fight over the cores with other test workers."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
