"""The ledger of tensors autograd saves for backward, and the few ops whose
CPU behaviour the measurement replaces by what CUDA / PyTorch 2.x do.
See saved_tensors.py and README.md."""
import contextlib

import torch
import torch.nn.functional as F


# ---------------------------------------------------------------------------
# The ledger of saved tensors


class SavedTensorLedger:
    """Records the storages saved for backward, by scope (block i, embedding,
    head) and by the op that saved them first."""

    def __init__(self):
        self.excluded = set()       # data pointers of parameters, buffers and parameter-derived tensors
        self.excluded_alive = []
        self.storages = {}          # data_ptr -> dict(bytes, scopes, op, dtype, shape)
        self.scope = "embedding"
        self.op = "?"
        self.layer_norm_op = False  # inside F.layer_norm: CUDA keeps its statistics in fp32

    def exclude_module(self, module):
        for p in module.parameters():
            self.excluded.add(_storage_ptr(p))
        for b in module.buffers():
            self.excluded.add(_storage_ptr(b))

    def parameter_derived(self, t):
        """A tensor computed from parameters alone (Gemma's 1 + weight): the
        estimator counts it with the weights, not with the activations."""
        self.excluded.add(_storage_ptr(t))
        self.excluded_alive.append(t)  # its address must not be reused by a saved tensor
        return t

    def pack(self, t):
        if t.dim() == 0:
            return t
        ptr = _storage_ptr(t)
        nbytes = _storage_bytes(t)
        if ptr in self.excluded or nbytes == 0:
            return t
        if self.layer_norm_op and t.dtype in (torch.bfloat16, torch.float16) and t.shape[-1] == 1:
            nbytes = nbytes * 2  # fp32 mean / rstd on CUDA
        entry = self.storages.get(ptr)
        if entry is None:
            entry = {"bytes": nbytes, "scopes": set(), "op": self.op, "dtype": str(t.dtype).replace("torch.", ""),
                     "shape": list(t.shape), "keep": t}
            self.storages[ptr] = entry
        entry["scopes"].add(self.scope)
        return t

    @contextlib.contextmanager
    def recording(self):
        with torch.autograd.graph.saved_tensors_hooks(self.pack, lambda t: t):
            yield

    def exclude_parameter_casts(self, module):
        """Autocast's 16-bit casts of the weights, which matmuls keep: the
        estimator counts them as weight copies. A kept 16-bit storage equal to
        a parameter's cast is one (random weights make a coincidence
        impossible)."""
        params = [p.detach() for p in module.parameters()]
        for ptr, entry in list(self.storages.items()):
            t = entry["keep"]
            if not t.is_floating_point():
                continue
            flat = torch.empty(0, dtype=t.dtype).set_(t.storage())
            for p in params:
                # Autocast casts fp32 weights to 16 bits: any other saved
                # tensor is an activation, even one whose values equal a
                # constant-initialised weight (a padded fp32 row of zeros of the
                # Gated DeltaNet's solve against a zero (1 + weight) norm weight).
                if p.dtype != torch.float32 or t.dtype not in (torch.bfloat16, torch.float16):
                    continue
                if p.numel() == flat.numel() and torch.equal(flat, p.to(t.dtype).reshape(-1)):
                    del self.storages[ptr]
                    break

    def summary(self, num_layers):
        blocks = [0] * num_layers
        per_op = {}
        embedding = head = shared = 0
        shared_ops = {}
        for entry in self.storages.values():
            scopes = entry["scopes"]
            if len(scopes) > 1:
                shared += entry["bytes"]
                shared_ops[entry["op"]] = shared_ops.get(entry["op"], 0) + entry["bytes"]
                continue
            (scope,) = scopes
            if scope == "embedding":
                embedding += entry["bytes"]
            elif scope == "head":
                head += entry["bytes"]
            else:
                i = int(scope.split()[1])
                blocks[i] += entry["bytes"]
                if i == num_layers - 1:
                    key = entry["op"]
                    per_op[key] = per_op.get(key, 0) + entry["bytes"]
        return {"blocks": blocks, "embedding": embedding, "head": head, "shared": shared,
                "shared_ops": shared_ops, "last_block_ops": per_op}


def _storage_ptr(t):
    return t.storage().data_ptr()


def _storage_bytes(t):
    return t.storage().nbytes()


_CURRENT = SavedTensorLedger()


def current():
    """The ledger of the measurement in progress."""
    return _CURRENT


def begin(fresh=None):
    """A fresh ledger for the next measurement (`fresh`: another kind, as
    step_truth.py's, which keeps no tensor alive)."""
    global _CURRENT
    _CURRENT = fresh if fresh is not None else SavedTensorLedger()
    return _CURRENT


@contextlib.contextmanager
def op(name):
    outer = _CURRENT.op
    _CURRENT.op = name
    try:
        yield
    finally:
        _CURRENT.op = outer


def dropout(x, p, training=True):
    """F.dropout as it runs on CUDA (native_dropout: a bool mask)."""
    if p == 0.0 or not training:
        return x
    out, _mask = torch.native_dropout(x, p, True)
    return out


class _MeanLastDim(torch.autograd.Function):
    """x.mean(-1, keepdim=True) as PyTorch >= 2.0 differentiates it: the
    backward needs only the input's shape. PyTorch 1.13's MeanBackward1 also
    kept the input itself (its formula read self.numel()); training runs on
    PyTorch 2.x, so the script measures what 2.x saves."""

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.mean(-1, keepdim=True)

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(ctx.shape) / ctx.shape[-1]


def mean_last_dim(x):
    if int(torch.__version__.split(".")[0]) >= 2:
        return x.mean(-1, keepdim=True)
    return _MeanLastDim.apply(x)


def autocast_fp32(x):
    """What CUDA autocast does to the inputs of the ops on its fp32 list
    (softmax, pow, ...): CPU autocast leaves those in bfloat16."""
    if torch.is_autocast_cpu_enabled() and x.dtype in (torch.bfloat16, torch.float16):
        return x.float()
    return x


def layer_norm(x, weight, bias, eps):
    _CURRENT.layer_norm_op = True
    try:
        return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)
    finally:
        _CURRENT.layer_norm_op = False

