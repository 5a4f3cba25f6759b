#!/usr/bin/env python3
"""CPU ground truth for trainmem's activation account.

Builds small decoder blocks op for op as the Hugging Face eager modeling files
write them (validation/hf_blocks.py: modeling_llama, ..., _gemma3, _glm4_moe,
_gpt_oss), runs one forward pass under
torch.autograd.graph.saved_tensors_hooks and records every tensor autograd
saves for backward. Each storage is counted once (by its data
pointer; views share their base's storage), parameters, buffers and tensors
computed from parameters alone are left out (the estimator counts those as
weights and weight copies), and 0-dim scalars are left out (CPU scalars or a
few bytes each).

Output (--out, default validation/activations/saved_tensors.json): for every
case its configuration in trainmem scenario terms (Hugging Face config.json
keys for the model, scenario keys for training) and the measured bytes per
block, for the embedding, for the head (final norm, LM head, loss) and for the
tensors shared by all blocks (rotary cos/sin, the causal mask a reentrant
checkpoint keeps), with a per-op breakdown of one block.

Where the CPU and CUDA kernels differ, the script follows CUDA, which is
what the estimator models, and says so (see validation/README.md):
  * dropout calls torch.native_dropout, which F.dropout dispatches to on CUDA
    (it saves a 1-byte bool mask; the CPU path of F.dropout saves a mask in
    the input's dtype);
  * LayerNorm statistics (mean, rstd) are fp32 on CUDA for 16-bit inputs and
    16-bit on CPU: they are counted at 4 bytes per element;
  * flash attention is a torch.autograd.Function that saves exactly what
    flash_attn's FlashAttnFunc saves (q, k, v, out, fp32 logsumexp, rng state)
    and recomputes attention in backward.

Every case's model is the one trainmem's importer makes of its config.json:
the script runs `trainmem-cli estimate --model-config <case config.json>
--format json` (--cli, default build/app/trainmem-cli) and builds its blocks
from the "model" object (validation/hf_blocks.py), so that the importer, the
C++ ground-truth test and these blocks cannot drift apart.

Needs only PyTorch (Debian's python3-torch 1.13 works) and the built CLI;
downloads nothing.
"""
import argparse
import gc
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import saved_tensor_ledger as ledger  # noqa: E402
import hybrid_truth  # noqa: E402
from hf_blocks import CausalLM, apply_lora  # noqa: E402


# ---------------------------------------------------------------------------
# The grid


def hf_model_keys(c):
    """The case's model as a Hugging Face config.json would write it."""
    if c["model_type"] == "gpt2":
        keys = ["model_type", "n_embd", "n_layer", "n_head", "n_inner", "vocab_size", "n_positions",
                "activation_function", "attn_pdrop", "resid_pdrop", "embd_pdrop"]
        out = {k: c[k] for k in keys}
        out["tie_word_embeddings"] = True
        return out
    keys = ["model_type", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
            "head_dim", "intermediate_size", "vocab_size", "max_position_embeddings", "hidden_act",
            "attention_dropout", "tie_word_embeddings"]
    out = {k: c[k] for k in keys if k in c}
    if c["model_type"] == "qwen2":
        out["attention_bias"] = True  # q, k, v biases: the family's convention
    if c["model_type"] in ("gemma2", "gemma3_text"):
        for k in ("attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar", "sliding_window",
                  "layer_types"):
            out[k] = c[k]
    if c["model_type"] == "gemma3_text":
        for k in ("rope_theta", "rope_local_base_freq"):
            out[k] = c[k]
    if c["model_type"] in ("deepseek_v3", "deepseek_v32"):
        if c["model_type"] == "deepseek_v32":
            for k in ("index_n_heads", "index_head_dim", "index_topk"):
                out[k] = c[k]
        for k in ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
                  "moe_intermediate_size", "n_routed_experts", "num_experts_per_tok", "n_shared_experts", "n_group",
                  "topk_group", "routed_scaling_factor", "first_k_dense_replace"):
            out[k] = c[k]
        out["norm_topk_prob"] = c.get("norm_topk_prob", True)
    if c["model_type"] == "deepseek_v2":
        for k in ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
                  "moe_intermediate_size", "n_routed_experts", "num_experts_per_tok", "n_shared_experts",
                  "routed_scaling_factor", "first_k_dense_replace", "topk_method", "n_group", "topk_group",
                  "norm_topk_prob", "scoring_func"):
            if k in c:
                out[k] = c[k]
    if c["model_type"] == "granite":
        for k in ("embedding_multiplier", "attention_multiplier", "residual_multiplier", "logits_scaling"):
            out[k] = c[k]
    if c["model_type"] == "qwen2_moe":
        for k in ("moe_intermediate_size", "shared_expert_intermediate_size", "num_experts", "num_experts_per_tok",
                  "norm_topk_prob", "decoder_sparse_step", "mlp_only_layers"):
            if k in c:
                out[k] = c[k]
    if c["model_type"] == "qwen3_moe":
        for k in ("moe_intermediate_size", "num_experts", "num_experts_per_tok", "norm_topk_prob",
                  "decoder_sparse_step", "mlp_only_layers"):
            out[k] = c[k]
    if c["model_type"] == "smollm3":
        out["no_rope_layers"] = c["no_rope_layers"]
        del out["tie_word_embeddings"]  # SmolLM3-3B's config.json leaves it out: tied by the class default
    if c["model_type"] == "gpt_oss":
        for k in ("attention_bias", "num_local_experts", "num_experts_per_tok", "swiglu_limit", "sliding_window",
                  "layer_types"):
            out[k] = c[k]
    if c["model_type"] == "glm4_moe":
        for k in ("partial_rotary_factor", "use_qk_norm", "attention_bias", "moe_intermediate_size",
                  "n_routed_experts", "num_experts_per_tok", "n_shared_experts", "n_group", "topk_group",
                  "routed_scaling_factor", "first_k_dense_replace", "norm_topk_prob"):
            out[k] = c[k]
    if c["model_type"] == "llama4_text":
        for k in ("intermediate_size_mlp", "num_local_experts", "num_experts_per_tok", "interleave_moe_layer_step",
                  "use_qk_norm", "no_rope_layers", "attention_chunk_size", "attn_temperature_tuning", "floor_scale",
                  "attn_scale"):
            out[k] = c[k]
    for k in HYBRID_KEYS.get(c["model_type"], ()):
        out[k] = c[k]
    if c["model_type"] == "mixtral":
        out["num_local_experts"] = c["num_local_experts"]
        out["num_experts_per_tok"] = c["num_experts_per_tok"]
    return out


FAMILIES = {
    # small shapes; head_dim 16 except Gemma (h/H differs from head_dim, as in Gemma-7B)
    "llama": dict(model_type="llama", hidden_size=64, num_attention_heads=4, num_key_value_heads=4, head_dim=16,
                  intermediate_size=176, hidden_act="silu", tie_word_embeddings=False),
    "mistral": dict(model_type="mistral", hidden_size=64, num_attention_heads=8, num_key_value_heads=2,
                    head_dim=8, intermediate_size=160, hidden_act="silu", tie_word_embeddings=False),
    "qwen2": dict(model_type="qwen2", hidden_size=96, num_attention_heads=6, num_key_value_heads=2, head_dim=16,
                  intermediate_size=224, hidden_act="silu", qkv_bias=True, tie_word_embeddings=True),
    "gemma": dict(model_type="gemma", hidden_size=64, num_attention_heads=4, num_key_value_heads=1, head_dim=32,
                  intermediate_size=192, hidden_act="gelu_pytorch_tanh", tie_word_embeddings=True),
    "qwen3": dict(model_type="qwen3", hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                  intermediate_size=160, hidden_act="silu", tie_word_embeddings=True),
    "olmo2": dict(model_type="olmo2", hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                  intermediate_size=160, hidden_act="silu", tie_word_embeddings=False),
    "granite": dict(model_type="granite", hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                    intermediate_size=160, hidden_act="silu", embedding_multiplier=12.0, attention_multiplier=0.0625,
                    residual_multiplier=0.22, logits_scaling=16.0, tie_word_embeddings=True),
    "qwen3_moe": dict(model_type="qwen3_moe", hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                      head_dim=16, intermediate_size=160, moe_intermediate_size=48, num_experts=4,
                      num_experts_per_tok=2, norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[],
                      hidden_act="silu", tie_word_embeddings=False),
    # Qwen1.5-MoE's structure: q/k/v biases (qkv_bias, class default True), a
    # softmax router whose top-k weights are not renormalised (norm_topk_prob
    # left out: Qwen2MoeConfig's default False), a shared expert behind a
    # sigmoid gate, and (mlp_only_layers) a dense first layer.
    "qwen2_moe": dict(model_type="qwen2_moe", hidden_size=64, num_attention_heads=4, num_key_value_heads=4,
                      intermediate_size=160, moe_intermediate_size=32, shared_expert_intermediate_size=96,
                      num_experts=4, num_experts_per_tok=2, decoder_sparse_step=1, mlp_only_layers=[0],
                      num_hidden_layers=3, hidden_act="silu", tie_word_embeddings=False),
    "smollm3": dict(model_type="smollm3", hidden_size=64, num_attention_heads=4, num_key_value_heads=1, head_dim=16,
                    intermediate_size=160, hidden_act="silu", num_hidden_layers=3, no_rope_layers=[1, 1, 0],
                    tie_word_embeddings=True),  # three layers: two share the rotary tables, one is NoPE
    # Gemma 2 and 3: sliding-window and global layers alternate; four layers,
    # so that every mask (and Gemma 3's two rotary tables) serves two blocks.
    "gemma2": dict(model_type="gemma2", hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                   intermediate_size=128, hidden_act="gelu_pytorch_tanh", attn_logit_softcapping=50.0,
                   final_logit_softcapping=30.0, query_pre_attn_scalar=16, num_hidden_layers=4, sliding_window=4,
                   layer_types=["sliding_attention", "full_attention"] * 2, tie_word_embeddings=True),
    # Gemma 3: per-head q/k GemmaRMSNorm, sandwich norms, no soft-capping,
    # a local rotary table for the sliding layers, embedding x sqrt(h).
    "gemma3_text": dict(model_type="gemma3_text", hidden_size=64, num_attention_heads=4, num_key_value_heads=1,
                        head_dim=32, intermediate_size=128, hidden_act="gelu_pytorch_tanh",
                        attn_logit_softcapping=None, final_logit_softcapping=None, query_pre_attn_scalar=32,
                        num_hidden_layers=4, sliding_window=4, rope_theta=1000000.0, rope_local_base_freq=10000.0,
                        layer_types=["sliding_attention", "full_attention"] * 2, tie_word_embeddings=True),
    "deepseek_v3": dict(model_type="deepseek_v3", hidden_size=64, num_attention_heads=4, num_key_value_heads=4,
                        q_lora_rank=24, kv_lora_rank=16, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12,
                        intermediate_size=160, moe_intermediate_size=32, n_routed_experts=8, num_experts_per_tok=2,
                        n_shared_experts=1, n_group=2, topk_group=1, routed_scaling_factor=2.5,
                        first_k_dense_replace=1, hidden_act="silu", tie_word_embeddings=False),
    # DeepSeek-V3.2: V3's blocks with the lightning indexer (its top-k below
    # the sequence, so the mask it makes matters), run under no_grad.
    "deepseek_v32": dict(model_type="deepseek_v32", hidden_size=64, num_attention_heads=4, num_key_value_heads=4,
                         q_lora_rank=24, kv_lora_rank=16, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12,
                         intermediate_size=160, moe_intermediate_size=32, n_routed_experts=8, num_experts_per_tok=2,
                         n_shared_experts=1, n_group=2, topk_group=1, routed_scaling_factor=2.5,
                         first_k_dense_replace=1, hidden_act="silu", tie_word_embeddings=False,
                         index_n_heads=2, index_head_dim=16, index_topk=5),
    # DeepSeek-V2-Lite's structure: MLA without q compression (q_lora_rank
    # null), the complex rotary, a leading dense layer, a softmax router with
    # greedy top-k, weights scaled and not renormalised (norm_topk_prob false
    # as Lite's config.json), tokens sorted by expert, two shared experts.
    "deepseek_v2": dict(model_type="deepseek_v2", hidden_size=64, num_attention_heads=4, num_key_value_heads=4,
                        q_lora_rank=None, kv_lora_rank=16, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12,
                        intermediate_size=160, moe_intermediate_size=24, n_routed_experts=8, num_experts_per_tok=2,
                        n_shared_experts=2, routed_scaling_factor=1.0, first_k_dense_replace=1,
                        topk_method="greedy", norm_topk_prob=False, scoring_func="softmax", num_hidden_layers=3,
                        hidden_act="silu", tie_word_embeddings=False),
    "mixtral": dict(model_type="mixtral", hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                    head_dim=16, intermediate_size=96, hidden_act="silu", num_local_experts=4,
                    num_experts_per_tok=2, tie_word_embeddings=False),
    # gpt-oss: attention sinks, q/k/v/o biases, half-width rotary tables,
    # alternating sliding and full layers; every layer a MoE of clamped-SwiGLU
    # experts with biases behind a biased top-k-then-softmax router.
    "gpt_oss": dict(model_type="gpt_oss", hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                    intermediate_size=48, attention_bias=True, num_local_experts=4, num_experts_per_tok=2,
                    swiglu_limit=7.0, num_hidden_layers=4, sliding_window=4,
                    layer_types=["sliding_attention", "full_attention"] * 2, hidden_act="silu",
                    tie_word_embeddings=False),
    # GLM-4.5: half of each head rotated, per-head q/k norms, q/k/v biases,
    # a leading dense layer, then DeepSeek-V3's sigmoid router and a shared expert.
    "glm4_moe": dict(model_type="glm4_moe", hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                     head_dim=16, partial_rotary_factor=0.5, use_qk_norm=True, attention_bias=True,
                     intermediate_size=160, moe_intermediate_size=32, n_routed_experts=8, num_experts_per_tok=2,
                     n_shared_experts=1, n_group=1, topk_group=1, routed_scaling_factor=1.0,
                     first_k_dense_replace=1, norm_topk_prob=True, hidden_act="silu", tie_word_embeddings=False),
    # Phi-3 / Phi-4: q, k and v sliced out of one fused qkv_proj, gate and up
    # chunked out of one gate_up_proj (GQA, as Phi-4's 40 heads over 10).
    "phi3": dict(model_type="phi3", hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                 intermediate_size=160, hidden_act="silu", tie_word_embeddings=False),
    # Llama 4 (Scout's structure): four layers, every second one NoPE (its
    # query scaled by attn_scales, no L2 q/k norm), the others rotary with the
    # complex freqs_cis, the weightless L2 q/k norm and chunked attention
    # (chunks of 8 < the sequence: the chunked mask differs from the causal
    # one); every layer a Llama4TextMoe running all 4 experts on every token,
    # top-1 sigmoid scores, one shared expert.
    "llama4_text": dict(model_type="llama4_text", hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                        head_dim=16, intermediate_size=48, intermediate_size_mlp=160, num_local_experts=4,
                        num_experts_per_tok=1, interleave_moe_layer_step=1, use_qk_norm=True,
                        no_rope_layers=[1, 0, 1, 0], attention_chunk_size=8, attn_temperature_tuning=True,
                        floor_scale=4, attn_scale=0.1, num_hidden_layers=4, hidden_act="silu",
                        tie_word_embeddings=False),
    "gpt2": dict(model_type="gpt2", n_embd=64, n_head=4, head_dim=16, n_inner=256, n_positions=64,
                 activation_function="gelu_new", tie_word_embeddings=True),
}


# The hybrids (issue 23): whole models of the families whose layers differ
# in kind, built by hf_hybrid_blocks.py. Each covers every layer kind its
# family has, with the attention layers twice, so that the causal mask a
# reentrant checkpoint keeps is shared as in the other families.
HYBRID_KEYS = {
    "qwen3_next": ("layer_types", "partial_rotary_factor", "linear_num_key_heads", "linear_num_value_heads",
                   "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim", "moe_intermediate_size",
                   "shared_expert_intermediate_size", "num_experts", "num_experts_per_tok", "norm_topk_prob",
                   "decoder_sparse_step", "mlp_only_layers"),
    "qwen3_5_text": ("layer_types", "partial_rotary_factor", "linear_num_key_heads", "linear_num_value_heads",
                     "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim"),
    "nemotron_h": ("hybrid_override_pattern", "mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups",
                   "conv_kernel", "chunk_size", "use_conv_bias", "use_bias", "mlp_bias", "mlp_hidden_act",
                   "mamba_hidden_act", "n_routed_experts", "moe_intermediate_size",
                   "moe_shared_expert_intermediate_size", "num_experts_per_tok", "n_group", "topk_group",
                   "norm_topk_prob", "routed_scaling_factor"),
    "granitemoehybrid": ("layer_types", "shared_intermediate_size", "num_local_experts", "num_experts_per_tok",
                         "mamba_n_heads", "mamba_d_head", "mamba_expand", "mamba_d_state", "mamba_n_groups",
                         "mamba_d_conv", "mamba_chunk_size", "mamba_conv_bias", "mamba_proj_bias",
                         "embedding_multiplier", "attention_multiplier", "residual_multiplier", "logits_scaling",
                         "position_embedding_type"),
    "lfm2": ("layer_types", "conv_L_cache", "conv_bias", "block_ff_dim", "block_auto_adjust_ff_dim",
             "block_ffn_dim_multiplier", "block_multiple_of", "tie_embedding"),
}

HYBRIDS = {
    # Qwen3-Next-80B-A3B's structure: Gated DeltaNet and gated full attention
    # alternating (full_attention_interval 2 here, 4 in the release), value
    # heads twice the key heads, a quarter of each head rotated; a
    # softmax-routed MoE with a gated shared expert on every layer but the
    # first (mlp_only_layers [0]: a dense Gated DeltaNet layer; the importer
    # represents only leading dense layers).
    "qwen3_next": dict(model_type="qwen3_next", hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                       head_dim=16, partial_rotary_factor=0.25, intermediate_size=160, moe_intermediate_size=32,
                       shared_expert_intermediate_size=48, num_experts=4, num_experts_per_tok=2,
                       norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[0], linear_num_key_heads=2,
                       linear_num_value_heads=4, linear_key_head_dim=16, linear_value_head_dim=8,
                       linear_conv_kernel_dim=4, num_hidden_layers=4,
                       layer_types=["linear_attention", "full_attention"] * 2, hidden_act="silu",
                       tie_word_embeddings=False),
    # Qwen3.5's text model: Qwen3-Next's layers with a dense SwiGLU on every
    # layer and the Gated DeltaNet's four separate projections; value heads
    # equal to key heads, so that its fp32 gate row (z its own tensor)
    # differs from Qwen3-Next's (z a view of the fused projection).
    "qwen3_5_text": dict(model_type="qwen3_5_text", hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                         head_dim=16, partial_rotary_factor=0.25, intermediate_size=160, linear_num_key_heads=2,
                         linear_num_value_heads=2, linear_key_head_dim=16, linear_value_head_dim=16,
                         linear_conv_kernel_dim=4, num_hidden_layers=4,
                         layer_types=["linear_attention", "full_attention"] * 2, hidden_act="silu",
                         tie_word_embeddings=False),
    # Nemotron-H: one mixer per layer, "M" Mamba-2 (two groups, chunks of 8:
    # two chunks of s = 16), "*" attention without rotary, "E" the relu2 MoE
    # with a sigmoid router and a relu2 shared expert, "-" the relu2 MLP.
    "nemotron_h": dict(model_type="nemotron_h", hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                       head_dim=16, intermediate_size=160, hybrid_override_pattern="M*E*-", num_hidden_layers=5,
                       mamba_num_heads=4, mamba_head_dim=16, ssm_state_size=8, n_groups=2, conv_kernel=4,
                       chunk_size=8, use_conv_bias=True, use_bias=False, mlp_bias=False, mlp_hidden_act="relu2",
                       mamba_hidden_act="silu", n_routed_experts=8, moe_intermediate_size=32,
                       moe_shared_expert_intermediate_size=48, num_experts_per_tok=2, n_group=1, topk_group=1,
                       norm_topk_prob=True, routed_scaling_factor=2.5, tie_word_embeddings=False),
    # Granite 4.0-H (granite-4.0-h-small's structure): Mamba-2 (one group, as
    # released) and attention without rotary (position_embedding_type
    # "nope"), every layer a top-k-then-softmax MoE plus a shared SwiGLU, the
    # Granite multipliers on the embedding, residuals, scores and logits.
    "granitemoehybrid": dict(model_type="granitemoehybrid", hidden_size=64, num_attention_heads=4,
                             num_key_value_heads=2, intermediate_size=32, shared_intermediate_size=96,
                             num_local_experts=4, num_experts_per_tok=2, num_hidden_layers=4,
                             layer_types=["mamba", "attention"] * 2, mamba_n_heads=4, mamba_d_head=32,
                             mamba_expand=2, mamba_d_state=8, mamba_n_groups=1, mamba_d_conv=4, mamba_chunk_size=8,
                             mamba_conv_bias=True, mamba_proj_bias=False, embedding_multiplier=12.0,
                             attention_multiplier=0.0625, residual_multiplier=0.22, logits_scaling=8.0,
                             position_embedding_type="nope", hidden_act="silu", tie_word_embeddings=True),
    # LFM2: short convolutions (L_cache 3) and GQA attention with per-head q/k
    # norms; the SwiGLU width from block_ff_dim 240: 2/3 of it, rounded up to 16.
    "lfm2": dict(model_type="lfm2", hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                 intermediate_size=240, block_ff_dim=240, block_auto_adjust_ff_dim=True,
                 block_ffn_dim_multiplier=1.0, block_multiple_of=16, num_hidden_layers=4,
                 layer_types=["conv", "full_attention", "conv", "full_attention"], conv_L_cache=3, conv_bias=False,
                 hidden_act="silu", tie_embedding=True),
}


def make_case(family, dtype, attention, ckpt, dropout_on=False, lora=None, batch=2, seq=16, vocab=96,
              layers=2, overrides=None):
    c = dict(FAMILIES[family] if family in FAMILIES else HYBRIDS[family])
    c.update(overrides or {})
    c["attention"] = attention
    c["vocab_size"] = vocab
    if family == "gpt2":
        c["n_layer"] = layers
        p = 0.1 if dropout_on else 0.0
        c["attn_pdrop"] = c["resid_pdrop"] = c["embd_pdrop"] = p
    else:
        c["num_hidden_layers"] = c.get("num_hidden_layers", layers)
        c["max_position_embeddings"] = 64
        c["attention_dropout"] = 0.1 if dropout_on else 0.0
    if lora:
        c["lora_rank"], c["lora_dropout"], c["lora_targets"] = lora
    training = {
        "micro_batch_size": batch,
        "sequence_length": seq,
        "precision": {"fp32": "fp32", "bf16": "mixed-bf16", "amp": "amp-bf16"}[dtype],
        "attention": attention,
        "kernels": "eager",
        "checkpointing": "full" if ckpt else "none",
        "loss": "standard",
        "finetuning": "lora" if lora else "full",
    }
    if lora:
        training.update(lora_rank=lora[0], lora_dropout=lora[1], lora_targets=list(lora[2]))
    parts = [family, dtype, attention, "ckpt" if ckpt else "no-ckpt"]
    if dropout_on:
        parts.append("dropout")
    if lora:
        parts.append(f"lora-r{lora[0]}" + ("-dropout" if lora[1] > 0 else ""))
    if (batch, seq) != (2, 16):
        parts.append(f"b{batch}-s{seq}")
    for key, value in sorted((overrides or {}).items()):
        parts.append(f"{key}={json.dumps(value)}")
    return {"name": " ".join(parts), "c": c, "dtype": dtype, "ckpt": ckpt,
            "model": hf_model_keys(c), "training": training, "parallelism": {}}


def grid():
    cases = []
    for family in FAMILIES:
        for dtype in ("fp32", "bf16"):
            for attention in ("eager", "flash"):
                for ckpt in (False, True):
                    cases.append(make_case(family, dtype, attention, ckpt))
    for family in ("llama", "gpt2"):
        for dtype in ("fp32", "bf16"):
            for attention in ("eager", "flash"):
                cases.append(make_case(family, dtype, attention, False, dropout_on=True))
    attn_targets = ("q_proj", "k_proj", "v_proj", "o_proj")
    all_targets = attn_targets + ("gate_proj", "up_proj", "down_proj")
    for family in ("llama", "mistral", "gemma"):
        for dtype in ("fp32", "bf16"):
            cases.append(make_case(family, dtype, "eager", False, lora=(4, 0.0, attn_targets)))
            cases.append(make_case(family, dtype, "flash", False, lora=(4, 0.1, attn_targets)))
    cases.append(make_case("llama", "bf16", "flash", False, lora=(8, 0.0, all_targets)))
    cases.append(make_case("llama", "bf16", "flash", True, lora=(8, 0.0, attn_targets)))
    # other shapes: longer sequence, batch 1, wider vocabulary
    cases.append(make_case("llama", "bf16", "eager", False, batch=1, seq=48, vocab=200))
    cases.append(make_case("mistral", "bf16", "flash", False, batch=3, seq=24, vocab=160))
    cases.append(make_case("gpt2", "bf16", "eager", False, dropout_on=True, batch=1, seq=40))
    # norm_topk_prob set against the class default: Qwen2-MoE renormalises,
    # DeepSeek-V3 does not (its sum and the copy the division keeps come and go).
    for dtype in ("bf16", "amp"):
        cases.append(make_case("qwen2_moe", dtype, "eager", False, overrides={"norm_topk_prob": True}))
        cases.append(make_case("deepseek_v3", dtype, "eager", False, overrides={"norm_topk_prob": False}))
    # DeepSeek-V2 (the full model's routing): group-limited top-k, 2 of 4 groups,
    # and q compressed through q_lora_rank.
    for dtype in ("fp32", "bf16", "amp"):
        for attention in ("eager", "flash"):
            cases.append(make_case("deepseek_v2", dtype, attention, False, overrides={
                "topk_method": "group_limited_greedy", "n_group": 4, "topk_group": 2, "q_lora_rank": 24,
                "routed_scaling_factor": 16.0}))
    # torch.autocast: fp32 weights, bf16 matmuls
    for family in FAMILIES:
        for attention in ("eager", "flash"):
            cases.append(make_case(family, "amp", attention, False))
    cases.append(make_case("llama", "amp", "eager", True))
    cases.append(make_case("gpt2", "amp", "flash", True))
    cases.append(make_case("llama", "amp", "eager", False, dropout_on=True))
    cases.append(make_case("gpt2", "amp", "eager", False, dropout_on=True))
    cases.append(make_case("llama", "amp", "eager", False, lora=(4, 0.0, attn_targets)))
    cases.append(make_case("mistral", "amp", "flash", False, lora=(4, 0.1, attn_targets)))
    cases.append(make_case("llama", "amp", "flash", False, lora=(8, 0.0, all_targets)))
    return cases + hybrid_grid()


def hybrid_grid():
    """The hybrids' cases (issue 23): every dtype, attention and
    checkpointing setting of each hybrid family's small model."""
    cases = []
    for family in HYBRIDS:
        for dtype in ("fp32", "bf16", "amp"):
            for attention in ("eager", "flash"):
                for ckpt in (False, True):
                    cases.append(make_case(family, dtype, attention, ckpt))
    return cases


def imported_model(cli, config):
    """The model trainmem's importer makes of `config` (a config.json dict)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(config, f)
        path = f.name
    try:
        run = subprocess.run([cli, "estimate", "--model-config", path, "--format", "json"],
                             capture_output=True, text=True, check=False)
    finally:
        os.unlink(path)
    if run.returncode != 0:
        raise RuntimeError(f"{cli} could not import {config}: {run.stderr.strip()}")
    doc = json.loads(run.stdout)
    # The family's note on how its activations are counted (Llama 4's dense
    # MoE) comes with every estimate; any other warning is a wrong import.
    warnings = [w for w in doc["warnings"] if w != doc["model"]["activation_caveat"]]
    if warnings:
        raise RuntimeError(f"importing {config} warned: {warnings}")
    return doc["model"]


class LiveLedger(hybrid_truth.LiveLedger):
    """hybrid_truth's ledger, which tells a tensor a live graph node keeps
    from one whose node died with an unused output (the final recurrent
    state of Gated DeltaNet, the group top-k of Nemotron-H's router), for
    the hybrids. The unpacked tensor gets back its requires_grad, which a
    reentrant checkpoint's backward copies onto the block input it recomputes."""

    def pack(self, t):
        holder = super().pack(t)
        holder.t.requires_grad_(t.requires_grad)
        return holder

    def summary(self, num_layers):
        """Only what a live node keeps, and not what was marked a weight
        after it was saved (exp(A_log), saved by exp before the mixer marks it)."""
        gc.collect()
        for ptr in [p for p, e in self.storages.items()
                    if p in self.excluded or not any(r() is not None for r in e["holders"])]:
            del self.storages[ptr]
        return super().summary(num_layers)


def measure(case, cli):
    if case["model"]["model_type"] in HYBRIDS:
        record = ledger._CURRENT = LiveLedger()
    else:
        record = ledger.begin()
    torch.manual_seed(0)
    c = dict(imported_model(cli, case["model"]))
    c["attention"] = case["training"]["attention"]
    c["config"] = case["model"]
    for key in ("lora_rank", "lora_dropout", "lora_targets"):
        if key in case["training"]:
            c[key] = case["training"][key]
    model = CausalLM(c)
    if case["dtype"] == "bf16":
        model = model.to(torch.bfloat16)
    if case["training"]["finetuning"] == "lora":
        apply_lora(model, c)
    model.train()
    record.exclude_module(model)
    b, s = case["training"]["micro_batch_size"], case["training"]["sequence_length"]
    input_ids = torch.randint(0, c["vocab_size"], (b, s))
    labels = input_ids.clone()
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=case["dtype"] == "amp")
    with record.recording(), autocast:
        loss = model(input_ids, labels, case["ckpt"])
    record.exclude_parameter_casts(model)
    summary = record.summary(model.n_layers)  # before backward, which frees the graph
    if case["model"]["model_type"] in HYBRIDS:
        summary["mixer_closed_form"] = check_mixers(record, model, case)
    loss.backward()  # the graph is sound: every saved tensor is usable
    if not math.isfinite(loss.item()):
        raise RuntimeError(f"{case['name']}: loss is {loss.item()}")
    return summary


def check_mixers(record, model, case):
    """Each hybrid token mixer's kept tensors, row by row, against the closed
    form of docs/hybrid-activations.md (hybrid_truth.expected_rows, which
    validation/hybrid_truth.py checks on the mixer alone): the mixer inside
    the whole model, fed by its norm and feeding the residual, must keep
    the same. hf_hybrid.py labels its rows "op|tensor"; the rows around the
    mixer (norms, MLP, MoE) carry no "|". Not checked under full
    checkpointing, where a block keeps only its input."""
    if case["ckpt"]:
        return {"checked_blocks": [], "differences": []}
    measured = {}
    for entry in record.storages.values():
        if len(entry["scopes"]) != 1 or "|" not in entry["op"]:
            continue
        (scope,) = entry["scopes"]
        if not scope.startswith("block "):
            continue
        op_name, _, tensor = entry["op"].partition("|")
        key = (int(scope.split()[1]), op_name, tensor)
        measured[key] = measured.get(key, 0) + entry["bytes"]
    t = case["training"]
    training = {"micro_batch_size": t["micro_batch_size"], "sequence_length": t["sequence_length"],
                "dtype": {"fp32": "fp32", "bf16": "bf16", "amp": "amp-bf16"}[case["dtype"]],
                "attention": t["attention"]}
    checked, diffs = [], []
    for i, layer in enumerate(model.layers):
        truth = getattr(layer, "mixer_truth", None)
        if truth is None:
            continue
        checked.append(i)
        expected = {}
        for op_name, tensor, nbytes in hybrid_truth.expected_rows(
                {"mixer": truth[0], "config": truth[1], "training": training}):
            if nbytes:
                expected[(i, op_name, tensor)] = expected.get((i, op_name, tensor), 0) + nbytes
        mine = {k: v for k, v in measured.items() if k[0] == i}
        for key in sorted(set(mine) | set(expected)):
            if mine.get(key, 0) != expected.get(key, 0):
                diffs.append(f"block {i} {truth[0]}: {key[1]} | {key[2]}: measured {mine.get(key, 0)}, "
                             f"closed form {expected.get(key, 0)}")
    return {"checked_blocks": checked, "differences": diffs}


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(here, "activations", "saved_tensors.json"))
    parser.add_argument("--cli", default=os.path.join(here, "..", "build", "app", "trainmem-cli"),
                        help="trainmem-cli, whose importer turns each case's config.json into the model")
    parser.add_argument("--only", default="", help="measure only the cases whose name contains this")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    started = time.time()
    results = []
    failures = 0
    for case in grid():
        if args.only not in case["name"]:
            continue
        m = measure(case, args.cli)
        if "mixer_closed_form" in m:
            for d in m["mixer_closed_form"]["differences"]:
                print(f"{case['name']}: {d}")
                failures += 1
        results.append({
            "name": case["name"],
            "model": case["model"],
            "training": case["training"],
            "parallelism": case["parallelism"],
            "measured": {
                "block_bytes": m["blocks"],
                "embedding_bytes": m["embedding"],
                "head_bytes": m["head"],
                "shared_bytes": m["shared"],
                "shared_ops": m["shared_ops"],
                "last_block_ops": m["last_block_ops"],
            },
        })
        if "mixer_closed_form" in m:
            results[-1]["mixer_closed_form"] = m["mixer_closed_form"]
    doc = {
        "generator": "validation/saved_tensors.py",
        "torch": torch.__version__,
        "method": "saved_tensors_hooks over one forward pass; each storage once; parameters, buffers, "
                  "parameter-derived tensors and 0-dim scalars left out; CUDA's dropout (bool mask) and "
                  "fp32 LayerNorm statistics; flash attention saves what FlashAttnFunc saves",
        "cases": results,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"saved_tensors.py: {len(results)} cases in {time.time() - started:.1f} s -> {args.out}; "
          f"{failures} hybrid mixer rows differ from docs/hybrid-activations.md")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
