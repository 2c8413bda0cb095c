"""DeepEP's communication buffers, per GPU (DeepEP Config.get_nvl_buffer_size_hint and
get_rdma_buffer_size_hint, csrc/legacy/config.hpp; constants in assumptions/moe.py). Megatron-Core
allocates them once per EP group with the larger of the dispatch and combine configs' hints; they
live outside PyTorch's caching allocator (NVSHMEM / IPC memory), so they count as `other`.

With c = num_sms/2 channels, n = min(EP, 8) NVLink ranks, r = max(EP/8, 1) RDMA ranks, hidden
bytes H = 2·hidden, per token slot: H + source meta + 128 top-k indices + 128 weights + 128 scales:
  NVLink: c · n · R_nvl · slot            (+ c·n·(2r + 3) ints of counters)
  RDMA:   c · r · R_rdma · 2 · (slot + 16) (+ counters), only when EP spans more than 8 GPUs.
"""

from __future__ import annotations

import numpy as np

from ..assumptions import moe as a


def _recv_tokens(ep: np.ndarray) -> np.ndarray:
    sizes = np.array(sorted(a.DEEPEP_NVL_RECV_TOKENS))
    tokens = np.array([a.DEEPEP_NVL_RECV_TOKENS[s] for s in sizes])
    index = np.clip(np.searchsorted(sizes, ep), 0, len(sizes) - 1)  # the next listed size up
    return tokens[index]


def deepep_buffer_bytes(hidden: int, ep: np.ndarray) -> np.ndarray:
    ep = np.asarray(ep, dtype=np.int64)
    channels = a.EP_COMM_SMS // 2
    nvl_ranks = np.minimum(ep, a.DEEPEP_NVL_PEERS)
    rdma_ranks = np.maximum(ep // a.DEEPEP_NVL_PEERS, 1)
    slot = (2 * hidden + a.DEEPEP_SOURCE_META_BYTES + a.DEEPEP_MAX_TOPK * a.DEEPEP_TOPK_IDX_BYTES
            + a.DEEPEP_MAX_TOPK * 4 + a.DEEPEP_MAX_SCALES * 4)
    nvl = channels * nvl_ranks * ((2 * rdma_ranks + 3) * 4 + _recv_tokens(ep) * slot)
    rdma = channels * rdma_ranks * ((a.DEEPEP_NVL_PEERS * 2 + 2) * 2 * 4
                                    + a.DEEPEP_RDMA_RECV_TOKENS * 2 * (slot + 16))
    rdma = np.where(ep > a.DEEPEP_NVL_PEERS, rdma, 0)
    return np.where(ep > 1, nvl + rdma, 0).astype(float)
