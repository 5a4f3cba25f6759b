"""The losses of training.loss for the whole-step CPU truth (validation/step_truth.py).

Each is called by hf_blocks' CausalLM in place of its LM head and
ForCausalLMLoss, with the LM head, the final norm's output (b, s, h) and the
unshifted labels, and returns the mean loss over the predicted tokens.

- chunked_output: torchtune's CEWithChunkedOutputLoss (torchtune/modules/loss/
  ce_chunked_output_loss.py, read at commit 10ff7cd2) with the decoder's
  chunked output (TransformerDecoder: `[self.output(chunk) for chunk in
  h.tensor_split(num_output_chunks, dim=1)]`) and the recipe's shifted labels
  (full_finetune_single_device: labels[..., 1:] and an ignore_index column).
  As in the recipe, the list of logits is dropped once the loss exists.
- fused_linear: Liger-Kernel's LigerFusedLinearCrossEntropyFunction
  (src/liger_kernel/ops/fused_linear_cross_entropy.py, read at commit
  00eba634): the token rows in chunks of next_power_of_2(BT / ceil(V / H))
  rows; each chunk's logits are turned into their gradient in place (the
  Triton cross-entropy kernel; here the same in-place ops in PyTorch), which
  gives the chunk's rows of grad_input and is added into grad_weight in place
  (the addmm(out=grad_weight) path of a GPU; the CPU fallback of that file
  allocates a weight-sized temporary per chunk that no GPU run has).
  grad_input and grad_weight are what forward saves; backward only scales
  them. Labels as transformers' ForCausalLMLoss pads and shifts them.
"""
import torch
import torch.nn.functional as F
from torch.profiler import record_function

IGNORE = -100
# The profiler range around every loss here: step_truth.py files a peak
# inside it under "loss".
RANGE = "step_truth_losses.head_loss"


def chunked_output_ce(lm_head, x, labels, chunks):
    labels = torch.hstack((labels[..., 1:], torch.full((labels.shape[0], 1), IGNORE, dtype=labels.dtype)))
    logits = [lm_head(chunk) for chunk in x.tensor_split(chunks, dim=1)]
    total_elements = (labels != IGNORE).sum()
    labels = [t.reshape(-1) for t in labels.tensor_split(chunks, dim=1)]
    logits = [c.reshape(-1, c.size(-1)) for c in logits]
    total = 0.0
    for logits_chunk, labels_chunk in zip(logits, labels):
        total += F.cross_entropy(logits_chunk.float(), labels_chunk, ignore_index=IGNORE, reduction="sum")
    del logits
    return total / total_elements


def _next_power_of_2(n):
    p = 1
    while p < n:
        p <<= 1
    return p


class FusedLinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, target):
        BT, H = x.shape
        V = weight.shape[0]
        inc_factor = -(-V // H)
        chunk_size = min(_next_power_of_2(-(-BT // inc_factor)), BT)
        grad_input = torch.zeros_like(x)
        grad_weight = torch.zeros_like(weight) if weight.requires_grad else None
        loss_1d = torch.zeros(BT, dtype=torch.float32)
        valid = target != IGNORE
        n = valid.sum().item()
        for start in range(0, BT, chunk_size):
            end = min(start + chunk_size, BT)
            x_chunk = x[start:end]
            logits = x_chunk @ weight.t()
            t = target[start:end]
            ok = valid[start:end]
            t_safe = torch.where(ok, t, torch.zeros_like(t))
            # The Triton kernel's work, in place over the chunk's logits: the
            # loss of each row, then softmax - one_hot, scaled by 1/n.
            m = logits.max(dim=-1, keepdim=True).values
            target_logit = logits.gather(1, t_safe[:, None])
            logits.sub_(m).exp_()
            s = logits.sum(dim=-1, keepdim=True)
            loss_1d[start:end] = ((s.float().log() + m.float() - target_logit.float()).squeeze(1) * ok) / n
            logits.div_(s)
            logits.scatter_add_(1, t_safe[:, None], -torch.ones_like(target_logit))
            logits.mul_((ok.to(logits.dtype) / n)[:, None])
            grad_input[start:end] = logits @ weight
            if grad_weight is not None:
                grad_weight.addmm_(logits.t(), x_chunk)
            del logits, m, s, target_logit
        ctx.save_for_backward(grad_input, grad_weight)
        return torch.sum(loss_1d)

    @staticmethod
    def backward(ctx, grad_output):
        grad_input, grad_weight = ctx.saved_tensors
        if not torch.equal(grad_output, torch.tensor(1.0, dtype=grad_output.dtype)):
            grad_input.mul_(grad_output)  # element_mul_kernel: in place
            if grad_weight is not None:
                grad_weight.mul_(grad_output)
        return grad_input, grad_weight, None


def fused_linear_ce(lm_head, x, labels):
    labels = F.pad(labels, (0, 1), value=IGNORE)
    shift_labels = labels[..., 1:].contiguous()
    return FusedLinearCrossEntropy.apply(x.view(-1, x.shape[-1]), lm_head.weight, shift_labels.view(-1))


def head_loss(training):
    """The callable CausalLM uses for training.loss, or None for its own
    ForCausalLMLoss."""
    loss = training["loss"]
    if loss == "standard":
        return None
    if loss == "chunked_output":
        def run(lm_head, x, labels):
            with record_function(RANGE):
                return chunked_output_ce(lm_head, x, labels, training["loss_chunks"])
        return run
    if loss == "fused_linear":
        def run(lm_head, x, labels):
            with record_function(RANGE):
                return fused_linear_ce(lm_head, x, labels)
        return run
    raise ValueError(f"training.loss: {loss!r} is not run by step_truth.py")
