"""Activation offloading for the whole-step CPU truth (validation/step_truth.py).

torchtune's OffloadActivations (torchtune/training/_activation_offloading.py,
torchtune v0.6.0-rc1-220-gbd2a0fc7c) is a saved_tensors_hooks context around
the model's forward. Its pack hook moves to host memory every saved tensor of
at least min_offload_size = 1024 bytes that is not an nn.Parameter (or
Buffer); smaller ones and parameters stay where they are. Its unpack hook
brings the tensor back as a new device tensor and forgets the host copy. The
model's output head runs under a NoOpManager (get_act_offloading_ctx_manager),
and the loss is computed outside the context, so neither is offloaded. With
use_streams=False (activation_offloading_use_streams: False) nothing else is
kept; that variant is what this file reproduces, exactly.

On the CPU host and device are the same memory, so the host copies are kept
as numpy arrays: numpy's allocations are not PyTorch allocator events, so the
profiler's live-bytes curve is the device side alone, and this class counts
the host side itself (host_live / host_peak, the bytes of the copies alive).

One difference from a torchtune model, on purpose: hf_blocks' CausalLM passes
the rotary tables and the attention mask into every checkpointed block as
arguments, so the reentrant checkpoint saves them (save_for_backward) and the
pack hook would see them once per block. torchtune's blocks compute their
rotary products and take no mask inside the checkpointed layer, where
checkpoint's own hooks hide them from OffloadActivations. So the tensors a
checkpointed block gets besides its input are left in place here (a forward
pre-hook on each block names them).
"""
import numpy as np
import torch

MIN_OFFLOAD_BYTES = 1024  # OffloadActivations(min_offload_size=1024)


class OffloadActivationsCpu(torch.autograd.graph.saved_tensors_hooks):
    def __init__(self, min_bytes=MIN_OFFLOAD_BYTES, floating_only=False):
        self.tracker = {}
        self.next_id = 0
        self.paused = False  # the output head and the loss: torchtune's NoOpManager
        self.host_live = 0
        self.host_peak = 0
        self.offloaded_packs = 0
        self.block_arguments = set()  # data_ptr of the tables and mask passed to the running block

        def pack(t):
            self.next_id += 1
            nbytes = t.element_size() * t.nelement()
            if (self.paused or nbytes < min_bytes or isinstance(t, torch.nn.Parameter)
                    or (floating_only and not t.is_floating_point()) or t.data_ptr() in self.block_arguments):
                self.tracker[self.next_id] = (t, None)
                return self.next_id
            # The host copy: numpy memory the profiler does not see. bf16 has no
            # numpy dtype; its bytes travel as int16.
            as_int = t.dtype == torch.bfloat16
            host = np.empty(tuple(t.shape), dtype=np.int16 if as_int else torch.empty(0, dtype=t.dtype).numpy().dtype)
            view = torch.from_numpy(host)
            (view.view(torch.bfloat16) if as_int else view).copy_(t.detach())
            self.tracker[self.next_id] = (host, (t.dtype, as_int, nbytes))
            self.host_live += nbytes
            self.host_peak = max(self.host_peak, self.host_live)
            self.offloaded_packs += 1
            return self.next_id

        def unpack(i):
            kept, meta = self.tracker.pop(i)
            if meta is None:
                return kept
            dtype, as_int, nbytes = meta
            back = torch.empty(kept.shape, dtype=dtype)  # the device copy, a PyTorch allocation
            src = torch.from_numpy(kept)
            back.copy_(src.view(torch.bfloat16) if as_int else src)
            self.host_live -= nbytes
            return back

        super().__init__(pack, unpack)


def apply_offloading(model, training):
    """training.activation_offloading = torchtune-no-streams: the model's
    forward runs under OffloadActivationsCpu, its LM head (and the loss after
    it) without. Returns the hooks (their host_peak is the host side)."""
    policy = training.get("activation_offloading", "none")
    if policy == "none":
        return None
    if policy != "torchtune-no-streams":
        raise ValueError(f"training.activation_offloading: {policy!r} is not reproduced on the CPU "
                         "(its CUDA stream stashes are not; docs/accuracy.md)")
    hooks = OffloadActivationsCpu()
    forward = model.forward

    def offloaded_forward(*args, **kwargs):
        hooks.paused = False
        with hooks:
            return forward(*args, **kwargs)

    def pause(_module, _inputs):
        hooks.paused = True

    def block_arguments(_module, args):
        hooks.block_arguments = {a.data_ptr() for a in args[1:] if torch.is_tensor(a)}

    for layer in model.layers:
        layer.register_forward_pre_hook(block_arguments)
    model.lm_head.register_forward_pre_hook(pause)
    model.forward = offloaded_forward
    return hooks


def apply_deepspeed_checkpointing(model, training):
    """training.deepspeed_cpu_checkpointing: DeepSpeed's CheckpointFunction
    (deepspeed/runtime/activation_checkpointing/checkpointing.py at
    v0.19.5-27-gedaa72212) keeps each floating-point argument of the
    checkpointed block on the CPU (copy_to_device(args, cpu,
    is_activation_to_checkpoint), the argument's own storage dropped) and
    moves it back before recomputing the block. Here: the same hooks around
    each checkpointed block's call only (where the reentrant checkpoint saves
    its arguments), with no size threshold, floating-point tensors only; the
    rotary tables and mask stay in place as above. partition_activations at
    tensor parallelism 1 keeps a clone of the whole input in place of the
    input (and gathers nothing): the run is plain full checkpointing.
    Returns the hooks, or None."""
    if not training.get("deepspeed_cpu_checkpointing", False):
        return None
    hooks = OffloadActivationsCpu(min_bytes=1, floating_only=True)

    def enter(_module, args):
        hooks.block_arguments = {a.data_ptr() for a in args[1:] if torch.is_tensor(a)}
        hooks.__enter__()

    def leave(_module, _inputs, _output):
        hooks.__exit__(None, None, None)

    for layer in model.layers:
        layer.register_forward_pre_hook(enter)
        layer.register_forward_hook(leave)
    return hooks
