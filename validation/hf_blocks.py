"""Small decoder blocks written op for op as the Hugging Face eager modeling
files write them (modeling_llama, _mistral, _qwen2, _qwen3, _olmo2, _gemma,
_gemma2, _gemma3, _gpt2, _mixtral, _qwen2_moe, _deepseek_v3 (and _deepseek_v32 with its indexer), _glm4_moe, _gpt_oss; Llama 4's
attention and MoE in hf_llama4.py, DeepSeek-V2's rotary and MoE in
hf_deepseek_v2.py; the hybrids' layers, _qwen3_next, _qwen3_5, _nemotron_h, _lfm2, _granitemoehybrid, in
hf_hybrid_blocks.py), with
PEFT-style LoRA adapters and a flash-attention stand-in that saves what
flash_attn's FlashAttnFunc saves.

The gated MLP and the mixture-of-experts blocks are in hf_moe.py, the
rotary helpers with the other ops in hf_ops.py.

Every block is built from the model trainmem's importer produced (the "model"
object of `trainmem-cli estimate --format json`: sizes, the family row's
traits, which layers have experts), never from a second reading of the
config.json: `c` is that object plus the case's run settings ("attention",
LoRA) and, under "config", the config.json itself for the numeric constants
the importer does not model (soft-capping values, query_pre_attn_scalar,
DeepSeek's group routing)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

import saved_tensor_ledger as ledger
from saved_tensor_ledger import autocast_fp32, dropout, layer_norm, mean_last_dim, op

from hf_deepseek_v2 import DeepseekV2MoE, apply_rotary_emb_mla
from hf_hybrid_blocks import final_norm, hybrid_layer, is_hybrid
from hf_llama4 import Llama4TextAttention, Llama4TextMoe, chunked_causal_mask, rotary_table
from hf_moe import DeepseekV3MoE, GatedMLP, GptOssMoE, MixtralSparseMoeBlock, Phi3MLP, Qwen2MoeSparseMoeBlock
from hf_ops import (Conv1D, FlashAttention, GemmaRMSNorm, GPT2LayerNorm, LlamaRMSNorm,  # noqa: F401
                    LoraLinear, Olmo2RMSNorm, activation, apply_partial_rotary_pos_emb, apply_rotary_pos_emb,
                    apply_rotary_pos_emb_halves, apply_rotary_pos_emb_interleave, repeat_kv, rotate_half)


def rms_norm_class(c):
    """The RMSNorm of the modeling file of the family the importer read the
    model as: Gemma's (1 + weight) in fp32, OLMo 2's weight in fp32, else
    Llama's (cast back, then weight)."""
    return {"gemma": GemmaRMSNorm, "gemma2": GemmaRMSNorm, "gemma3_text": GemmaRMSNorm,
            "olmo2": Olmo2RMSNorm, "gpt_oss": Olmo2RMSNorm}.get(c["read_as"], LlamaRMSNorm)


def layer_types(c):
    """Which layers slide (Gemma 2/3, gpt-oss): the config.json's layer_types,
    checked against the count the importer made of it. Llama 4: its rotary
    layers attend in chunks, its NoPE layers globally (Llama4TextConfig's
    default layer_types), from the importer's NoPE interval."""
    interval = c.get("no_rope_layer_interval", 0)
    if interval > 0:
        return ["full_attention" if (i + 1) % interval == 0 else "chunked_attention" for i in range(c["num_layers"])]
    types = c["config"].get("layer_types", ["full_attention"] * c["num_layers"])
    sliding = sum(t == "sliding_attention" for t in types)
    if sliding != c.get("sliding_window_layers", 0):
        raise ValueError(f"layer_types has {sliding} sliding layers, the importer {c.get('sliding_window_layers')}")
    return types


class LlamaAttention(nn.Module):
    """modeling_llama LlamaAttention + eager_attention_forward (also Mistral,
    Qwen2 with q/k/v biases, Qwen3 with per-head q/k RMSNorm, OLMo 2 with
    q/k RMSNorm over the whole projections (modeling_olmo2 Olmo2Attention,
    transformers 4.47), Gemma, Gemma-2 with tanh soft-capping of the logits,
    Mixtral)."""

    def __init__(self, c, index):
        super().__init__()
        h, nh, kv, d = c["hidden_size"], c["num_heads"], c["num_kv_heads"], c["head_dim"]
        # SmolLM3Attention: no rotary embedding where no_rope_layers[layer] is 0 (NoPE).
        self.use_rope = c["config"].get("no_rope_layers", [1] * (index + 1))[index] != 0
        bias = c["attention_qkv_bias"]
        self.nh, self.kv, self.d = nh, kv, d
        # Phi3Attention (transformers commit 43c2b481): one fused qkv_proj,
        # q, k and v sliced out of its output.
        self.fused_qkv = c["modules"] == "phi3"
        if self.fused_qkv:
            self.qkv_proj = nn.Linear(h, (nh + 2 * kv) * d, bias=bias)
        else:
            self.q_proj = nn.Linear(h, nh * d, bias=bias)
            self.k_proj = nn.Linear(h, kv * d, bias=bias)
            self.v_proj = nn.Linear(h, kv * d, bias=bias)
        self.o_proj = nn.Linear(nh * d, h, bias=c["attention_output_bias"])
        # Gemma-2 scales by query_pre_attn_scalar; the values do not change what is saved.
        self.scaling = c["config"].get("query_pre_attn_scalar", d) ** -0.5
        self.scaling = c["config"].get("attention_multiplier", self.scaling)  # Granite
        self.dropout = c["attention_dropout"]
        self.flash = c["attention"] == "flash"
        self.softcap = c["config"].get("attn_logit_softcapping", 50.0) if c["attention_softcap"] else None
        self.qk_norm = c["qk_norm"] == "per_head"
        if self.qk_norm:
            self.q_norm = rms_norm_class(c)(d)
            self.k_norm = rms_norm_class(c)(d)
        # GptOssAttention: one learned sink logit per query head.
        self.sinks = nn.Parameter(torch.randn(nh) * 0.5) if c.get("attention_sinks") else None
        self.rotary_halves = c.get("rotary_half_table", False)
        self.qk_norm_projection = c["qk_norm"] == "projection"
        if self.qk_norm_projection:
            self.q_norm = rms_norm_class(c)(nh * d)
            self.k_norm = rms_norm_class(c)(kv * d)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        if self.fused_qkv:
            with op("qkv_proj"):
                qkv = self.qkv_proj(x)
                q_end, k_end = self.nh * self.d, (self.nh + self.kv) * self.d
                q = qkv[..., :q_end].view(b, s, -1, self.d)
                k = qkv[..., q_end:k_end].view(b, s, -1, self.d)
                v = qkv[..., k_end:].view(b, s, -1, self.d).transpose(1, 2)
        elif self.qk_norm_projection:
            with op("q_proj"):
                q = self.q_proj(x)
            with op("q_norm"):
                q = self.q_norm(q).view(b, s, -1, self.d)
            with op("k_proj"):
                k = self.k_proj(x)
            with op("k_norm"):
                k = self.k_norm(k).view(b, s, -1, self.d)
        else:
            with op("q_proj"):
                q = self.q_proj(x).view(b, s, -1, self.d)
            with op("k_proj"):
                k = self.k_proj(x).view(b, s, -1, self.d)
        if self.qk_norm:
            with op("q_norm"):
                q = self.q_norm(q)
            with op("k_norm"):
                k = self.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        if not self.fused_qkv:
            with op("v_proj"):
                v = self.v_proj(x).view(b, s, -1, self.d).transpose(1, 2)
        if self.use_rope:
            with op("rotary"):
                if self.rotary_halves:
                    q, k = apply_rotary_pos_emb_halves(q, k, cos, sin)
                else:
                    q, k = apply_partial_rotary_pos_emb(q, k, cos, sin)
        if self.flash:
            with op("flash attention"):
                if torch.is_autocast_cpu_enabled():
                    # transformers' _flash_attention_forward casts fp32 inputs
                    # (upcast by the fp32 rotary tables) to the autocast dtype.
                    dt = torch.get_autocast_cpu_dtype()
                    q, k, v = q.to(dt), k.to(dt), v.to(dt)
                o = FlashAttention.apply(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                         self.dropout, self.scaling)
        else:
            with op("attention scores"):
                k = repeat_kv(k, self.nh // self.kv)
                v = repeat_kv(v, self.nh // self.kv)
                w = torch.matmul(q, k.transpose(2, 3)) * self.scaling
            if self.softcap:
                with op("attention softcap"):
                    w = w / self.softcap
                    w = torch.tanh(w)
                    w = w * self.softcap
            with op("attention scores"):
                w = w + mask
            if self.sinks is not None:
                # modeling_gpt_oss eager_attention_forward: the sink column joins
                # the logits, the row max is subtracted, softmax in their dtype,
                # and the sink's column is dropped again.
                with op("attention sinks"):
                    sinks = self.sinks.reshape(1, -1, 1, 1).expand(b, -1, s, -1)
                    combined = torch.cat([w, sinks], dim=-1)
                    combined = combined - combined.max(dim=-1, keepdim=True).values
                with op("attention softmax"):
                    probs = F.softmax(combined, dim=-1, dtype=combined.dtype)
                    w = probs[..., :-1]
            else:
                with op("attention softmax"):
                    w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
            with op("attention dropout"):
                w = dropout(w, self.dropout)
            with op("attention over values"):
                o = torch.matmul(w, v)
                o = o.transpose(1, 2).contiguous()
        o = o.reshape(b, s, -1).contiguous()
        with op("o_proj"):
            return self.o_proj(o)


class DeepseekV3Attention(nn.Module):
    """modeling_deepseek_v3 DeepseekV3Attention: multi-head latent attention."""

    def __init__(self, c):
        super().__init__()
        h, self.nh, mla = c["hidden_size"], c["num_heads"], c["mla"]
        self.q_lora, self.kv_lora = mla["q_lora_rank"], mla["kv_lora_rank"]
        self.nope, self.rope, self.vd = mla["qk_nope_head_dim"], mla["qk_rope_head_dim"], mla["v_head_dim"]
        self.qk = self.nope + self.rope
        if self.q_lora:
            self.q_a_proj = nn.Linear(h, self.q_lora, bias=False)
            self.q_a_layernorm = LlamaRMSNorm(self.q_lora)
            self.q_b_proj = nn.Linear(self.q_lora, self.nh * self.qk, bias=False)
        else:
            self.q_proj = nn.Linear(h, self.nh * self.qk, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(h, self.kv_lora + self.rope, bias=False)
        self.kv_a_layernorm = LlamaRMSNorm(self.kv_lora)
        self.kv_b_proj = nn.Linear(self.kv_lora, self.nh * (self.nope + self.vd), bias=False)
        self.o_proj = nn.Linear(self.nh * self.vd, h, bias=False)
        self.scaling = self.qk ** -0.5
        self.dropout = c["attention_dropout"]
        self.flash = c["attention"] == "flash"
        # DeepSeek-V3.2 / GLM-5 (modular_deepseek_v32.py at transformers
        # 01f8fa55): the lightning indexer, run under no_grad as released,
        # picks the top-k keys of each query; the others are masked.
        self.indexer = None
        if c.get("indexer"):
            from hf_hybrid import DeepseekV32Indexer
            ix = c["indexer"]
            self.indexer = DeepseekV32Indexer(dict(hidden_size=h, index_n_heads=ix["heads"],
                                                   index_head_dim=ix["head_dim"], qk_rope_head_dim=self.rope,
                                                   index_topk=ix["topk"], q_lora_rank=self.q_lora), False)

    def rotate(self, q_rot, k_rot, cos, sin):
        return apply_rotary_pos_emb_interleave(q_rot, k_rot, cos, sin)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        if self.q_lora:
            with op("q_a_proj"):
                q = self.q_a_proj(x)
            with op("q_a_layernorm"):
                q = self.q_a_layernorm(q)
            q_resid = q
            with op("q_b_proj"):
                q = self.q_b_proj(q)
        else:
            with op("q_proj"):
                q = self.q_proj(x)
        q = q.view(b, s, -1, self.qk).transpose(1, 2)
        q_pass, q_rot = torch.split(q, [self.nope, self.rope], dim=-1)
        with op("kv_a_proj_with_mqa"):
            compressed = self.kv_a_proj_with_mqa(x)
        k_pass, k_rot = torch.split(compressed, [self.kv_lora, self.rope], dim=-1)
        with op("kv_a_layernorm"):
            k_pass = self.kv_a_layernorm(k_pass)
        with op("kv_b_proj"):
            k_pass = self.kv_b_proj(k_pass).view(b, s, -1, self.nope + self.vd).transpose(1, 2)
        k_pass, v = torch.split(k_pass, [self.nope, self.vd], dim=-1)
        k_rot = k_rot.view(b, 1, s, self.rope)
        with op("rotary"):
            q_rot, k_rot = self.rotate(q_rot, k_rot, cos, sin)
        k_rot = k_rot.expand(*k_pass.shape[:-1], -1)
        with op("query / key concatenation"):
            q = torch.cat((q_pass, q_rot), dim=-1)
            k = torch.cat((k_pass, k_rot), dim=-1)
        if self.indexer is not None and not self.flash:
            with op("indexer (no_grad)"):
                idx, _ = self.indexer(x, q_resid, cos[..., : self.rope], sin[..., : self.rope], mask[:, 0])
                keep = torch.zeros(b, s, s, dtype=torch.bool).scatter_(-1, idx.long(), True)
                mask = mask.masked_fill(~keep.unsqueeze(1), torch.finfo(mask.dtype).min)
        if self.flash:
            with op("flash attention"):
                v = F.pad(v, [0, self.qk - self.vd])
                if torch.is_autocast_cpu_enabled():
                    dt = torch.get_autocast_cpu_dtype()
                    q, k, v = q.to(dt), k.to(dt), v.to(dt)
                o = FlashAttention.apply(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                         self.dropout, self.scaling)
                o = o[:, :, :, : self.vd]
        else:
            with op("attention scores"):
                w = torch.matmul(q, k.transpose(2, 3)) * self.scaling
                w = w + mask
            with op("attention softmax"):
                w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
            with op("attention dropout"):
                w = dropout(w, self.dropout)
            with op("attention over values"):
                o = torch.matmul(w, v).transpose(1, 2).contiguous()
        o = o.reshape(b, s, -1).contiguous()
        with op("o_proj"):
            return self.o_proj(o)


class DeepseekV2Attention(DeepseekV3Attention):
    """modeling_deepseek_v2 DeepseekV2Attention (transformers commit
    03eac6f6): V3's latent attention (q_proj when q_lora_rank is null), the
    rope part of q and k rotated by complex products with freqs_cis."""

    def rotate(self, q_rot, k_rot, freqs_cis, _unused):
        return apply_rotary_emb_mla(q_rot, k_rot, freqs_cis)


class LlamaBlock(nn.Module):
    """LlamaDecoderLayer; Gemma2DecoderLayer adds norms on the outputs of
    attention and MLP (post_attention / pre_feedforward / post_feedforward);
    Olmo2DecoderLayer has only the norms on the outputs."""

    def __init__(self, c, index):
        super().__init__()
        h = c["hidden_size"]
        norm = rms_norm_class(c)
        self.sandwich = c["norms_per_block"] >= 4
        self.post_norm = c["norm_placement"] == "post"
        if not self.post_norm:
            self.input_layernorm = norm(h)
        self.post_attention_layernorm = norm(h)
        if self.sandwich:
            self.pre_feedforward_layernorm = norm(h)
        if self.sandwich or self.post_norm:
            self.post_feedforward_layernorm = norm(h)
        # Gemma2DecoderLayer (transformers commit 9a80143c): a sliding layer
        # derives its window mask from the one causal mask inside its forward.
        self.window_in_layer = None
        if c.get("causal_masks", 2) == 1 and layer_types(c)[index] == "sliding_attention":
            self.window_in_layer = c["config"]["sliding_window"]
        # GraniteDecoderLayer scales both branches by residual_multiplier (a Python float).
        self.residual_multiplier = c["config"].get("residual_multiplier")
        if c["mla"]:
            # DeepSeek-V2 rotates with a complex freqs_cis, V3 with interleaved cos / sin.
            self.self_attn = DeepseekV2Attention(c) if c.get("complex_rotary") else DeepseekV3Attention(c)
        elif c.get("complex_rotary"):
            self.self_attn = Llama4TextAttention(c, index)
        else:
            self.self_attn = LlamaAttention(c, index)
        moe = c["moe"]
        if moe and moe["moe_layers"][index]:
            block = {"sigmoid_fp32": DeepseekV3MoE, "topk_softmax": GptOssMoE,
                     "topk_sigmoid_every_expert": Llama4TextMoe,
                     "softmax_fp32_sorted": DeepseekV2MoE}.get(moe["router"], MixtralSparseMoeBlock)
            if moe["router"] == "softmax" and moe["shared_expert_ffn"] > 0:
                block = Qwen2MoeSparseMoeBlock  # softmax router with a shared expert: Qwen2-MoE's block
            self.mlp = block(c)
        else:
            mlp = Phi3MLP if c["modules"] == "phi3" else GatedMLP
            self.mlp = mlp(h, c["ffn_hidden_size"], c["hidden_act"])

    def forward(self, x, cos, sin, mask):
        if self.window_in_layer is not None and mask is not None:
            outside = torch.tril(torch.ones_like(mask, dtype=torch.bool), diagonal=-self.window_in_layer)
            mask = torch.where(outside, torch.finfo(mask.dtype).min, mask)
        residual = x
        if self.post_norm:
            x = self.self_attn(x, cos, sin, mask)
            with op("post_attention_layernorm"):
                x = self.post_attention_layernorm(x)
            x = residual + x
            residual = x
            x = self.mlp(x)
            with op("post_feedforward_layernorm"):
                x = self.post_feedforward_layernorm(x)
            return residual + x
        with op("input_layernorm"):
            x = self.input_layernorm(x)
        x = self.self_attn(x, cos, sin, mask)
        if self.sandwich:
            with op("post_attention_layernorm"):
                x = self.post_attention_layernorm(x)
            x = residual + x
            residual = x
            with op("pre_feedforward_layernorm"):
                x = self.pre_feedforward_layernorm(x)
            x = self.mlp(x)
            with op("post_feedforward_layernorm"):
                x = self.post_feedforward_layernorm(x)
            return residual + x
        x = residual + self.scale_residual(x)
        residual = x
        with op("post_attention_layernorm"):
            x = self.post_attention_layernorm(x)
        x = self.mlp(x)
        return residual + self.scale_residual(x)

    def scale_residual(self, x):
        return x if self.residual_multiplier is None else x * self.residual_multiplier


class GPT2Block(nn.Module):
    """modeling_gpt2 GPT2Block with GPT2Attention (eager or flash) and GPT2MLP."""

    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.nh, self.d = c["num_heads"], c["head_dim"]
        self.ln_1 = GPT2LayerNorm(h, eps=1e-5)
        self.c_attn = Conv1D(3 * h, h)
        self.c_proj = Conv1D(h, h)
        self.ln_2 = GPT2LayerNorm(h, eps=1e-5)
        self.c_fc = Conv1D(c["ffn_hidden_size"], h)
        self.mlp_proj = Conv1D(h, c["ffn_hidden_size"])
        self.act = activation(c["hidden_act"])
        self.attn_pdrop, self.resid_pdrop = c["attention_dropout"], c["hidden_dropout"]
        self.flash = c["attention"] == "flash"
        n = c["max_position_embeddings"]
        self.register_buffer("bias", torch.tril(torch.ones((n, n), dtype=torch.bool)).view(1, 1, n, n),
                             persistent=False)

    def forward(self, x, cos, sin, mask):
        b, s, h = x.shape
        residual = x
        with op("ln_1"):
            x = self.ln_1(x)
        with op("c_attn"):
            q, k, v = self.c_attn(x).split(h, dim=2)
        q = q.view(b, s, -1, self.d).transpose(1, 2)
        k = k.view(b, s, -1, self.d).transpose(1, 2)
        v = v.view(b, s, -1, self.d).transpose(1, 2)
        if self.flash:
            with op("flash attention"):
                o = FlashAttention.apply(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                         self.attn_pdrop, self.d ** -0.5)
        else:
            with op("attention scores"):
                w = torch.matmul(q, k.transpose(-1, -2))
                w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype)
                causal = self.bias[:, :, :s, :s]
                w = torch.where(causal, w.to(w.dtype), torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype))
            with op("attention softmax"):
                w = F.softmax(autocast_fp32(w), dim=-1)
                w = w.type(v.dtype)
            with op("attention dropout"):
                w = dropout(w, self.attn_pdrop)
            with op("attention over values"):
                o = torch.matmul(w, v).transpose(1, 2)
        o = o.reshape(b, s, -1).contiguous()
        with op("c_proj"):
            o = self.c_proj(o)
        with op("resid dropout (attention)"):
            o = dropout(o, self.resid_pdrop)
        x = residual + o
        residual = x
        with op("ln_2"):
            x = self.ln_2(x)
        with op("c_fc"):
            x = self.c_fc(x)
        with op("mlp act_fn"):
            x = self.act(x)
        with op("mlp c_proj"):
            x = self.mlp_proj(x)
        with op("resid dropout (mlp)"):
            x = dropout(x, self.resid_pdrop)
        return residual + x


class CausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.gpt2 = c["modules"] == "gpt2"
        h, n_layers, V = c["hidden_size"], c["num_layers"], c["vocab_size"]
        if self.gpt2:
            self.wte = nn.Embedding(V, h)
            self.wpe = nn.Embedding(c["max_position_embeddings"], h)
            self.layers = nn.ModuleList([GPT2Block(c) for _ in range(n_layers)])
            self.norm = GPT2LayerNorm(h, eps=1e-5)
            self.lm_head = nn.Linear(h, V, bias=False)
            self.lm_head.weight = self.wte.weight  # tied, as GPT-2 always is
        else:
            self.embed_tokens = nn.Embedding(V, h)
            if is_hybrid(c):  # Qwen3-Next, Qwen3.5, Nemotron-H, LFM2, Granite 4.0-H: hf_hybrid_blocks.py
                self.layers = nn.ModuleList([hybrid_layer(c, i) for i in range(n_layers)])
                self.norm = final_norm(c)
            else:
                self.layers = nn.ModuleList([LlamaBlock(c, i) for i in range(n_layers)])
                self.norm = rms_norm_class(c)(h)
            self.lm_head = nn.Linear(h, V, bias=False)
            if c["tied_embeddings"]:
                self.lm_head.weight = self.embed_tokens.weight
        self.n_layers = n_layers
        self.input_requires_grad = False  # PEFT's enable_input_require_grads
        self.head_loss = None  # step_truth_losses.head_loss(training); None: ForCausalLMLoss

    def rotary(self, b, s, dtype):
        d = self.c["rotary_dim"]  # the importer's width: MLA's rope dims, partial_rotary_factor
        halves = self.c.get("rotary_half_table", False)  # gpt-oss: each frequency once, emb = freqs
        if halves:
            d *= 2
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
        pos = torch.arange(s).float()[None, :].expand(b, s)
        freqs = (inv_freq[None, :, None].expand(b, -1, 1) @ pos[:, None, :]).transpose(1, 2)
        emb = freqs if halves else torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype), emb.sin().to(dtype)

    def forward(self, input_ids, labels, checkpointing):
        b, s = input_ids.shape
        ledger.current().scope = "embedding"
        cos = sin = mask = None
        types = layer_types(self.c)
        per_type = {}  # layer type -> (cos, sin, mask)
        with op("embedding"):
            if self.gpt2:
                position_ids = torch.arange(s).unsqueeze(0)
                x = self.wte(input_ids) + self.wpe(position_ids)
                if self.input_requires_grad:
                    x.requires_grad_(True)
                x = dropout(x, self.c["embedding_dropout"])
            else:
                x = self.embed_tokens(input_ids)
                if "embedding_multiplier" in self.c["config"]:
                    x = x * self.c["config"]["embedding_multiplier"]  # GraniteModel
                if self.input_requires_grad:
                    x.requires_grad_(True)
                if self.c["read_as"] in ("gemma", "gemma2", "gemma3_text"):  # GemmaModel scales by sqrt(hidden_size)
                    x = x * torch.tensor(self.c["hidden_size"] ** 0.5, dtype=x.dtype)
                # Gemma3TextModel / GptOssModel / Llama4TextModel: one causal mask
                # per layer type (create_causal_mask, create_sliding_window_causal_mask,
                # create_chunked_causal_mask); Gemma2Model (transformers commit
                # 9a80143c) one for all ("causal_masks" 1). Gemma 3 also one rotary
                # table per type (rope_local_base_freq); Llama 4 one complex table.
                for t in sorted(set(types)):
                    with torch.no_grad():
                        if self.c.get("complex_rotary"):
                            if cos is None:  # Llama 4: one complex fp32 freqs_cis
                                cos = rotary_table(b, s, self.c["rotary_dim"])
                        elif cos is None or self.c["rotary_tables"] > 1:
                            cos, sin = self.rotary(b, s, x.dtype)
                    # Gemma 2 (causal_masks 1): one mask for every layer kind.
                    if self.c["attention"] == "eager" and (mask is None or self.c.get("causal_masks", 2) > 1):
                        # HF's 4-D additive causal mask (b, 1, s, s) in the compute dtype
                        mask = torch.full((s, s), torch.finfo(x.dtype).min, dtype=x.dtype).triu(1)
                        if t == "chunked_attention":
                            mask = chunked_causal_mask(s, self.c["config"]["attention_chunk_size"], x.dtype)
                        if t == "sliding_attention" and self.c.get("causal_masks", 2) > 1:
                            window = self.c["config"]["sliding_window"]
                            mask = mask + torch.full((s, s), torch.finfo(x.dtype).min, dtype=x.dtype).tril(-window)
                            mask = mask.clamp(min=torch.finfo(x.dtype).min)
                        mask = mask[None, None].expand(b, 1, s, s).contiguous()
                    per_type[t] = (cos, sin, mask)
        for i, layer in enumerate(self.layers):
            ledger.current().scope = f"block {i}"
            if per_type:
                cos, sin, mask = per_type[types[i]]
            # A hybrid model passes the causal mask only to its attention
            # layers (Qwen3-Next, Nemotron-H) and no rotary tables where it has
            # none (Nemotron-H): what a checkpointed layer is handed is what it keeps.
            layer_cos, layer_sin = (cos, sin) if getattr(layer, "takes_rotary", True) else (None, None)
            layer_mask = mask if getattr(layer, "takes_mask", True) else None
            if checkpointing:
                x = checkpoint(layer, x, layer_cos, layer_sin, layer_mask, use_reentrant=True)
            else:
                x = layer(x, layer_cos, layer_sin, layer_mask)
        ledger.current().scope = "head"
        with op("final norm"):
            x = self.norm(x)
        if self.head_loss is not None:
            # validation/step_truth_losses.py: another loss over the head (training.loss)
            with op("loss"):
                return self.head_loss(self.lm_head, x, labels)
        with op("lm_head"):
            logits = self.lm_head(x)
        if "logits_scaling" in self.c["config"]:
            with op("logits scaling"):
                logits = logits / self.c["config"]["logits_scaling"]  # GraniteForCausalLM
        cap = self.c["config"].get("final_logit_softcapping", 30.0) if self.c["final_logit_softcap"] else None
        if cap:
            with op("final logit softcap"):
                logits = torch.tanh(logits / cap) * cap
        with op("loss"):
            # transformers.loss.loss_utils.ForCausalLMLoss
            logits = logits.float()
            labels = F.pad(labels, (0, 1), value=-100)
            shift_labels = labels[..., 1:].contiguous()
            loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), shift_labels.view(-1),
                                   ignore_index=-100, reduction="mean")
        return loss


def apply_lora(model, c):
    """Frozen base, LoRA adapters on the target linears (PEFT semantics)."""
    for p in model.parameters():
        p.requires_grad_(False)
    targets = c["lora_targets"]
    for layer in model.layers:
        attn = layer.self_attn
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            if name in targets:
                setattr(attn, name, LoraLinear(getattr(attn, name), c["lora_rank"], c["lora_dropout"]))
        mlp = layer.mlp
        for name in ("gate_proj", "up_proj", "down_proj"):
            if name in targets and isinstance(mlp, GatedMLP):
                setattr(mlp, name, LoraLinear(getattr(mlp, name), c["lora_rank"], c["lora_dropout"]))
    model.input_requires_grad = True

