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
- vocab_parallel: Megatron-LM's vocab-parallel cross-entropy, on one tensor
  rank (read at core_v0.15.0rc7-2333-gd98e8a64dd), op for op:
  "unfused" is megatron/core/tensor_parallel/cross_entropy.py
  (_VocabParallelCrossEntropy: its backward returns the fp32 gradient, which
  autograd's engine casts to the logits' dtype), "fused" is
  megatron/core/fusions/fused_cross_entropy.py (--cross-entropy-loss-fusion
  with the default native implementation: the same steps, the gradient cast
  to bf16 in its own backward). Its jit_fuser is torch.compile on PyTorch >=
  2.2 (megatron/core/jit.py), which this PyTorch lacks: the steps run eager.
  The all-reduces over one rank are no-ops and are left out. The logits come
  from the LM head in the model's layout, the labels are the tokens as they
  are (Megatron's data loader shifts them; same bytes), and the per-token
  loss is summed and divided by the token count as pretrain_gpt.py's
  loss_func does with --calculate-per-token-loss.
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


class _MegatronCrossEntropy:
    """The helpers of VocabParallelCrossEntropy (cross_entropy.py), vocab
    range [0, V) on one rank."""

    @staticmethod
    def logits_max(logits):
        logits = logits.float()  # a copy unless already fp32
        return logits, torch.max(logits, dim=-1)[0]

    @staticmethod
    def predicted_logits(logits, target, logits_max, start, end):
        logits -= logits_max.unsqueeze(dim=-1)
        target_mask = (target < start) | (target >= end)
        masked_target = target.clone() - start
        masked_target[target_mask] = 0
        logits_2d = logits.view(-1, logits.size()[-1])
        masked_target_1d = masked_target.view(-1)
        arange_1d = torch.arange(start=0, end=logits_2d.size()[0])
        predicted_1d = logits_2d[arange_1d, masked_target_1d]
        predicted_1d = predicted_1d.clone().contiguous()
        predicted = predicted_1d.view_as(target)
        predicted[target_mask] = 0.0
        exp_logits = logits
        torch.exp(logits, out=exp_logits)
        sum_exp_logits = exp_logits.sum(dim=-1)
        return target_mask, masked_target_1d, predicted, sum_exp_logits, exp_logits

    @staticmethod
    def loss(exp_logits, predicted, sum_exp_logits):
        loss = torch.log(sum_exp_logits) - predicted
        exp_logits.div_(sum_exp_logits.unsqueeze(dim=-1))
        return exp_logits, loss

    @staticmethod
    def gradients(softmax, target_mask, masked_target_1d, grad_output):
        grad_input = softmax
        grad_2d = grad_input.view(-1, softmax.size()[-1])
        arange_1d = torch.arange(start=0, end=grad_2d.size()[0])
        softmax_update = 1.0 - target_mask.view(-1).float()
        grad_2d[arange_1d, masked_target_1d] -= softmax_update
        grad_input.mul_(grad_output.unsqueeze(dim=-1))
        return grad_input


class VocabParallelCrossEntropy(torch.autograd.Function):
    """cross_entropy.py's _VocabParallelCrossEntropy (no label smoothing)."""

    @staticmethod
    def forward(ctx, logits, target):
        M = _MegatronCrossEntropy
        logits, logits_max = M.logits_max(logits)
        V = logits.size()[-1]
        target_mask, masked_target_1d, predicted, sum_exp, exp_logits = M.predicted_logits(
            logits, target, logits_max, 0, V)
        exp_logits, loss = M.loss(exp_logits, predicted, sum_exp)
        ctx.save_for_backward(exp_logits, target_mask, masked_target_1d)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        softmax, target_mask, masked_target_1d = ctx.saved_tensors
        return _MegatronCrossEntropy.gradients(softmax, target_mask, masked_target_1d, grad_output), None


class FusedVocabParallelCrossEntropy(torch.autograd.Function):
    """fused_cross_entropy.py's _VocabParallelCrossEntropy: predicted logits
    and the sum of exponentials concatenated for one all-reduce, the
    gradient cast to bf16 inside backward."""

    @staticmethod
    def forward(ctx, logits, target):
        M = _MegatronCrossEntropy
        logits, logits_max = M.logits_max(logits)
        V = logits.size()[-1]
        target_mask, masked_target_1d, predicted, sum_exp, exp_logits = M.predicted_logits(
            logits, target, logits_max, 0, V)
        predicted_sum_exp = torch.cat((predicted, sum_exp))
        split = predicted_sum_exp.size()[0] // 2
        predicted, sum_exp = torch.split(predicted_sum_exp, split)
        exp_logits, loss = M.loss(exp_logits, predicted, sum_exp)
        ctx.save_for_backward(exp_logits, target_mask, masked_target_1d)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        softmax, target_mask, masked_target_1d = ctx.saved_tensors
        grad_input = _MegatronCrossEntropy.gradients(softmax, target_mask, masked_target_1d, grad_output)
        return grad_input.to(torch.bfloat16), None


def vocab_parallel_ce(lm_head, x, labels, fused):
    # Megatron's tensors are [s, b, ...] and compute_language_model_loss
    # copies the labels into that layout (labels.transpose(0, 1).contiguous())
    # and the loss back ([s b] => [b s]); here the model's layout is [b, s],
    # so the two copies are clones of the same bytes.
    logits = lm_head(x)
    target = labels.clone()
    fn = FusedVocabParallelCrossEntropy if fused else VocabParallelCrossEntropy
    loss = fn.apply(logits, target)
    del logits, target
    loss = loss.clone()
    losses = loss.view(-1).float()
    loss_mask = torch.ones_like(losses)
    return torch.sum(losses * loss_mask) / loss_mask.sum()


def head_loss(training, variant=None):
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
    if loss == "vocab_parallel":
        if variant not in (None, "fused", "unfused"):
            raise ValueError(f"loss_variant: {variant!r} (fused or unfused)")
        def run(lm_head, x, labels):
            with record_function(RANGE):
                return vocab_parallel_ce(lm_head, x, labels, variant != "unfused")
        return run
    raise ValueError(f"training.loss: {loss!r} is not run by step_truth.py")
