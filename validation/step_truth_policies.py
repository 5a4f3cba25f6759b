"""Activation-checkpointing policies of validation/step_truth.py that
PyTorch 1.13 (Debian's python3-torch) does not ship.

Op-level selective checkpointing (trainmem's activation_checkpointing = "op";
torchtitan's selective_ac_option = "op", built on PyTorch's
torch.utils.checkpoint.create_selective_checkpoint_contexts, which 1.13 lacks).
What that policy does, and what this module does the same way:
- the block's forward runs without building a graph; the outputs of the ops
  the policy saves are kept (a TorchDispatchMode sees every aten op below
  autograd, as create_selective_checkpoint_contexts' caching mode does), and
  the block's inputs are kept, as any checkpoint keeps them;
- backward runs the block's forward again with a graph; an op the policy
  saved returns its kept output instead of running (the replaying mode), so
  its output is not allocated again; then backward runs through that graph.
The op names of a save list are trainmem's (training.checkpoint_save_ops):
"mm" every aten.mm, "mm-every-second" the 1st, 3rd, ... aten.mm of the block
(torchtitan's rule; counted apart in forward and replay), "attention" the
attention kernel (here the flash-attention stand-in of hf_ops.py: its output
and logsumexp), "reduce_scatter" and "max" (no such op runs on one CPU).
This is a reentrant checkpoint (an autograd.Function), like step_truth.py's
CheckpointedBlock; torchtitan's is not reentrant, which changes no byte
counted here: both keep the inputs and free the replayed graph in backward.
"""
import contextlib

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import hf_blocks
import hf_ops

MM = torch.ops.aten.mm.default


class _PolicyState:
    """What one block's forward kept for its backward."""

    def __init__(self, save_ops):
        unknown = set(save_ops) - {"mm", "mm-every-second", "attention", "reduce_scatter", "max"}
        if unknown:
            raise ValueError(f"training.checkpoint_save_ops: unknown {sorted(unknown)}")
        self.every_mm = "mm" in save_ops
        self.every_second_mm = "mm-every-second" in save_ops
        self.attention = "attention" in save_ops
        self.mm_outputs = []   # kept aten.mm outputs, in forward order
        self.attention_outputs = []  # (out, lse, seed) of each attention call
        self.in_kernel = False  # inside the attention stand-in: its matmuls are the kernel's

    def keeps_mm(self, count):
        return self.every_mm or (self.every_second_mm and count % 2 == 1)


class _KeepOutputs(TorchDispatchMode):
    """Forward: run every op; keep the outputs of the matmuls the policy saves."""

    def __init__(self, state):
        super().__init__()
        self.state, self.count = state, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is MM and not self.state.in_kernel:
            self.count += 1
            if self.state.keeps_mm(self.count):
                self.state.mm_outputs.append(out.detach())
        return out


class _ReplayKept(TorchDispatchMode):
    """Backward's replay: a kept matmul returns its kept output (autograd, above
    this mode, still records the op and saves its inputs)."""

    def __init__(self, state):
        super().__init__()
        self.state, self.count = state, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is MM and not self.state.in_kernel:
            self.count += 1
            if self.state.keeps_mm(self.count):
                return self.state.mm_outputs.pop(0)
        return func(*args, **(kwargs or {}))


class _KeptAttention(torch.autograd.Function):
    """The attention stand-in's node in the replay, with the kept output and
    logsumexp: saves what hf_ops.FlashAttention saves, computes nothing."""

    @staticmethod
    def forward(ctx, q, k, v, dropout_p, scale, kept):
        out, lse, seed = kept
        ctx.save_for_backward(q, k, v, out, lse, torch.tensor([seed, 0], dtype=torch.int64))
        ctx.dropout_p, ctx.scale, ctx.rep = dropout_p, scale, q.shape[2] // k.shape[2]
        return out

    @staticmethod
    def backward(ctx, dout):
        return hf_ops.FlashAttention.backward(ctx, dout) + (None,)


@contextlib.contextmanager
def _attention_for(state, replay):
    """hf_blocks calls FlashAttention.apply by its module-level name; in a
    policy block that name is the keeping (forward) or replaying version."""

    class Keeping:
        @staticmethod
        def apply(q, k, v, dropout_p, scale):
            seed = int(torch.randint(0, 2**31 - 1, (1,)).item())
            state.in_kernel = True
            try:
                with torch.no_grad(), torch.autocast("cpu", enabled=False):
                    out, lse = hf_ops._reference_attention(q, k, v, q.shape[2] // k.shape[2], dropout_p, scale, seed)
            finally:
                state.in_kernel = False
            if state.attention:
                state.attention_outputs.append((out, lse, seed))
            return out

    class Replaying:
        @staticmethod
        def apply(q, k, v, dropout_p, scale):
            if state.attention:
                return _KeptAttention.apply(q, k, v, dropout_p, scale, state.attention_outputs.pop(0))
            state.in_kernel = True
            try:
                return hf_ops.FlashAttention.apply(q, k, v, dropout_p, scale)
            finally:
                state.in_kernel = False

    saved = hf_blocks.FlashAttention
    hf_blocks.FlashAttention = Replaying if replay else Keeping
    try:
        yield
    finally:
        hf_blocks.FlashAttention = saved


class _OpCheckpoint(torch.autograd.Function):
    @staticmethod
    def forward(ctx, block, save_ops, *args):
        ctx.block = block
        ctx.autocast = (torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype())
        state = _PolicyState(save_ops)
        with torch.no_grad(), _attention_for(state, replay=False), _KeepOutputs(state):
            out = block(*args)
        ctx.state = state
        ctx.save_for_backward(*args)
        return out

    @staticmethod
    def backward(ctx, grad):
        inputs = [None if a is None else a.detach().requires_grad_(a.requires_grad) for a in ctx.saved_tensors]
        state, ctx.state = ctx.state, None
        enabled, dtype = ctx.autocast
        with torch.enable_grad(), torch.autocast("cpu", enabled=enabled, dtype=dtype), \
                _attention_for(state, replay=True), _ReplayKept(state):
            out = ctx.block(*inputs)
        del state
        torch.autograd.backward(out, grad)
        return (None, None) + tuple(None if a is None or not a.requires_grad else a.grad for a in inputs)


class OpCheckpointedBlock(torch.nn.Module):
    """A block under op-level selective checkpointing with a save list."""

    def __init__(self, block, save_ops):
        super().__init__()
        self.block = block
        self.save_ops = tuple(save_ops)
        _PolicyState(self.save_ops)  # rejects unknown names now

    def forward(self, *args):
        return _OpCheckpoint.apply(self.block, self.save_ops, *args)
