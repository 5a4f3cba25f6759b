"""CPU-side tests of validation/measure_gpu.py: the scenario -> PyTorch mapping,
the optimizers it builds, the master-weight optimizer, the LoRA wrapper and
the phase bookkeeping. What needs transformers or CUDA is skipped.

    /usr/bin/python3 -m unittest -v test_measure_gpu     (from validation/)
"""
import contextlib
import io
import json
import math
import re
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure_gpu as mg  # noqa: E402

try:
    import torch
    from torch import nn
except ImportError:
    torch = None

try:
    import transformers  # noqa: F401
    HAVE_TRANSFORMERS = True
except ImportError:
    HAVE_TRANSFORMERS = False

needs_torch = unittest.skipIf(torch is None, "torch is not installed in this Python")


def scenario(**training):
    return {"model": {"preset": "gpt2"}, "training": {"sequence_length": 512, **training}}


def plan(**training):
    return mg.plan_scenario(scenario(**training), "case")


class PrecisionMappingTest(unittest.TestCase):
    def test_amp_keeps_fp32_weights_and_autocasts_to_16_bit(self):
        for precision, autocast in (("amp-bf16", "bf16"), ("amp-fp16", "fp16")):
            p = plan(precision=precision)
            self.assertEqual((p.recipe.weights, p.recipe.autocast, p.recipe.master), ("fp32", autocast, False))
        self.assertTrue(plan(precision="amp-fp16").recipe.grad_scaler)
        self.assertFalse(plan(precision="amp-bf16").recipe.grad_scaler)

    def test_pure_bf16_has_bf16_weights_and_states_and_no_master(self):
        p = plan(precision="pure-bf16")
        self.assertEqual((p.recipe.weights, p.recipe.autocast, p.recipe.master, p.recipe.states),
                         ("bf16", None, False, "bf16"))

    def test_mixed_bf16_keeps_an_fp32_master_and_bf16_grads_unless_told(self):
        p = plan(precision="mixed-bf16")
        self.assertEqual((p.recipe.weights, p.recipe.master, p.recipe.states, p.grad_dtype),
                         ("bf16", True, "fp32", "bf16"))
        self.assertEqual(plan(precision="mixed-bf16", grad_dtype="fp32").grad_dtype, "fp32")

    def test_fp32_is_fp32_everywhere(self):
        p = plan(precision="fp32")
        self.assertEqual((p.recipe.weights, p.recipe.grads, p.recipe.autocast, p.recipe.states),
                         ("fp32", "fp32", None, "fp32"))


class RunSettingsMappingTest(unittest.TestCase):
    def test_flash_attention_runs_as_sdpa_and_eager_as_eager(self):
        self.assertEqual(plan(attention="flash").attn_implementation, "sdpa")
        self.assertEqual(plan(attention="eager").attn_implementation, "eager")

    def test_full_checkpointing_is_switched_on(self):
        self.assertTrue(plan(activation_checkpointing="full").checkpointing)
        self.assertFalse(plan(activation_checkpointing="none").checkpointing)

    def test_batch_sequence_and_accumulation_are_taken_as_given(self):
        p = plan(micro_batch_size=4, sequence_length=256, gradient_accumulation_steps=3)
        self.assertEqual((p.micro_batch_size, p.sequence_length, p.gradient_accumulation_steps), (4, 256, 3))

    def test_lora_takes_rank_targets_and_dropout(self):
        p = plan(finetuning="lora", lora_rank=8, lora_targets=["c_attn"], lora_dropout=0.05)
        self.assertEqual((p.lora_rank, p.lora_targets, p.lora_dropout), (8, ("c_attn",), 0.05))
        self.assertEqual(plan().lora_rank, 0)

    def test_preset_model_is_read_from_the_presets_folder(self):
        p = plan()
        self.assertEqual(p.model_type, "gpt2")
        self.assertEqual(p.model_config["n_embd"], 768)   # GPT-2 small's width
        self.assertNotIn("model_type", p.model_config)

    def test_hf_config_object_is_passed_through_without_its_storage_dtype(self):
        s = {"model": {"model_type": "llama", "hidden_size": 64, "torch_dtype": "bfloat16"}, "training": {}}
        p = mg.plan_scenario(s, "x")
        self.assertEqual(p.model_config, {"hidden_size": 64})


class DefaultsTest(unittest.TestCase):
    """A key a case leaves out must mean what it means to trainmem: the
    harness's defaults are checked against core/training_config.h."""

    MEMBER_OF_KEY = {"activation_checkpointing": "checkpointing", "attention": "attention", "loss": "loss"}

    def test_defaults_agree_with_training_config_header(self):
        core = mg.REPO / "core"
        header = (core / "training" / "training_config.h").read_text()
        struct = header[header.index("struct TrainingConfig {"):]
        struct = struct[:struct.index("\n};")]  # a member's braced default ends in "};" too
        members = dict(re.findall(r"^\s+[\w:<>]+ (\w+) = ([^;]+);", struct, re.M))
        names = dict(re.findall(r'\{(\w+::\w+), "([^"]+)"\}', (core / "training" / "names.cpp").read_text()))
        # Optimizer names are the first field of the optimizer catalogue's rows.
        names.update(re.findall(r'\{(OptimizerKind::\w+), "([^"]+)"', (core / "training" / "optimizer_state.cpp").read_text()))
        checked = 0
        for key, default in mg.TRAINING_DEFAULTS.items():
            member = self.MEMBER_OF_KEY.get(key, key)
            if member not in members:
                continue
            value = members[member].strip()
            if value in names:
                value = names[value]
            elif value.startswith("{"):
                value = re.findall(r'"([^"]+)"', value)
            elif re.fullmatch(r"-?\d+", value):
                value = int(value)
            elif re.fullmatch(r"-?\d+\.\d*", value):
                value = float(value)
            with self.subTest(key=key):
                self.assertEqual(default, value)
            checked += 1
        self.assertGreaterEqual(checked, 14)

    def test_empty_training_section_is_trainmems_default_scenario(self):
        p = mg.plan_scenario({"model": {"preset": "llama-3.2-1b"}}, "x")
        self.assertEqual((p.precision, p.optimizer, p.optimizer_impl, p.sequence_length, p.micro_batch_size),
                         ("mixed-bf16", "adamw", "foreach", 2048, 1))


class RejectionTest(unittest.TestCase):
    def assertRejected(self, key, scenario_doc):
        with self.assertRaises(mg.Unsupported) as caught:
            mg.plan_scenario(scenario_doc, "x")
        self.assertIn(key, str(caught.exception))

    def test_parallel_degrees_and_sharding_need_more_than_one_gpu(self):
        for key in ("data", "tensor", "pipeline", "context", "expert"):
            self.assertRejected(f"parallelism.{key}", {**scenario(), "parallelism": {key: 2}})
        self.assertRejected("parallelism.zero_stage", {**scenario(), "parallelism": {"zero_stage": 1}})
        self.assertRejected("parallelism.offload_optimizer", {**scenario(), "parallelism": {"offload_optimizer": True}})

    def test_recipes_and_kernels_outside_plain_pytorch_are_rejected(self):
        self.assertRejected("training.precision", scenario(precision="fp8-mixed"))
        self.assertRejected("training.finetuning", scenario(finetuning="qlora"))
        self.assertRejected("training.activation_checkpointing", scenario(activation_checkpointing="selective"))
        self.assertRejected("training.kernels", scenario(kernels="fused"))
        self.assertRejected("training.loss", scenario(loss="chunked"))
        self.assertRejected("training.optimizer", scenario(optimizer="muon"))
        self.assertRejected("training.optimizer_impl", scenario(optimizer="lion", optimizer_impl="fused"))

    def test_optimizers_and_implementations_come_from_trainmems_catalogue(self):
        # validation/optimizers.json is `trainmem-cli optimizers --format json`
        # (held equal to it by CliOptimizers.OptimizersJsonIsTheHarnessCatalogue).
        catalogue = mg.load_optimizer_catalogue()
        self.assertEqual(catalogue, mg.OPTIMIZER_CATALOGUE)
        self.assertEqual(set(mg.OPTIMIZERS) | set(mg.NOT_REPRODUCED), set(catalogue))
        for key in mg.OPTIMIZERS:
            for impl in ("foreach", "fused", "for-loop"):
                doc = scenario(optimizer=key, optimizer_impl=impl)
                if impl in catalogue[key]["implementations"]:
                    self.assertEqual(mg.plan_scenario(doc, "x").optimizer_impl, impl)
                else:
                    self.assertRejected("training.optimizer_impl", doc)
        self.assertRejected("training.optimizer", scenario(optimizer="sophia"))

    def test_dtype_overrides_pytorch_cannot_honour_are_rejected(self):
        self.assertRejected("training.grad_dtype", scenario(precision="amp-bf16", grad_dtype="bf16"))
        self.assertRejected("training.optimizer_state_dtype",
                            scenario(precision="pure-bf16", optimizer_state_dtype="fp32"))

    def test_unknown_keys_are_not_silently_ignored(self):
        self.assertRejected("training.micro_batch", scenario(micro_batch=2))
        self.assertRejected("parallelism.tensr", {**scenario(), "parallelism": {"tensr": 1}})

    def test_gpt2_sequence_beyond_its_learned_positions(self):
        self.assertRejected("training.sequence_length", scenario(sequence_length=2048))

    def test_unknown_preset(self):
        self.assertRejected("model.preset", {"model": {"preset": "no-such-model"}})


class CommittedCasesTest(unittest.TestCase):
    def test_every_case_maps_to_a_run(self):
        cases = sorted(mg.CASES.glob("*.json"))
        self.assertGreaterEqual(len(cases), 30)
        for path in cases:
            with self.subTest(case=path.name):
                doc = json.loads(path.read_text())
                p = mg.plan_scenario(doc, path.stem)
                self.assertEqual(p.name, path.stem)

    def test_dry_run_exit_status(self):
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(mg.main(["--all", "--dry-run"]), mg.EXIT_OK)
        with tempfile.TemporaryDirectory() as tmp:
            bad = Path(tmp) / "tp2.json"
            bad.write_text(json.dumps({**scenario(), "parallelism": {"tensor": 2}}))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(mg.main(["--dry-run", str(bad)]), mg.EXIT_UNSUPPORTED)
            self.assertIn("parallelism.tensor", out.getvalue())

    def test_measured_run_needs_a_gpu(self):
        if torch is not None and torch.cuda.is_available():
            self.skipTest("a GPU is present")
        case = sorted(mg.CASES.glob("*.json"))[0]
        with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stderr(io.StringIO()):
            status = mg.main(["--one", str(case), "--out", tmp])
            self.assertEqual(status, mg.EXIT_UNSUPPORTED)
            self.assertEqual(list(Path(tmp).iterdir()), [])   # nothing invented


@needs_torch
class OptimizerConstructionTest(unittest.TestCase):
    # States per parameter element (docs/memory-model.md, Optimizer states):
    # SGD+momentum 1, Adagrad 1, RMSprop 1, Adam/AdamW 2, Lion 1.
    STATES = {"sgd": 0, "sgd-momentum": 1, "adagrad": 1, "rmsprop": 1, "adam": 2, "adamw": 2, "lion": 1}

    def test_state_elements_per_parameter(self):
        for kind, per_param in self.STATES.items():
            for impl in ("foreach", "for-loop"):
                with self.subTest(kind=kind, impl=impl):
                    torch.manual_seed(0)
                    model = nn.Sequential(nn.Linear(6, 5), nn.Linear(5, 3))
                    opt = mg.build_optimizer(kind, impl, model.parameters())
                    model(torch.randn(2, 6)).sum().backward()
                    opt.step()
                    elements = sum(v.numel() for s in opt.state.values() for v in s.values()
                                   if torch.is_tensor(v) and v.dim() > 0)
                    params = (6 * 5 + 5) + (5 * 3 + 3)   # 53
                    self.assertEqual(elements, per_param * params)

    def test_foreach_switch_is_passed_to_torch(self):
        model = nn.Linear(3, 3)
        self.assertTrue(mg.build_optimizer("adamw", "foreach", model.parameters()).defaults["foreach"])
        self.assertFalse(mg.build_optimizer("adamw", "for-loop", model.parameters()).defaults["foreach"])
        self.assertTrue(mg.build_optimizer("lion", "foreach", model.parameters()).defaults["foreach"])

    def test_fused_is_asked_of_torch_or_refused(self):
        import inspect
        has_fused = "fused" in inspect.signature(torch.optim.AdamW.__init__).parameters
        if has_fused:
            self.assertEqual(mg._impl_kwargs(torch.optim.AdamW, "fused"), {"fused": True})
        else:
            with self.assertRaises(mg.Unsupported):
                mg._impl_kwargs(torch.optim.AdamW, "fused")

    @unittest.skipUnless(HAVE_TRANSFORMERS, "transformers is not installed")
    def test_adafactor_factors_the_second_moment_of_matrices(self):
        model = nn.Linear(6, 5, bias=False)
        opt = mg.build_optimizer("adafactor", "for-loop", model.parameters())
        model(torch.randn(2, 6)).sum().backward()
        opt.step()
        state = opt.state[model.weight]
        self.assertEqual(state["exp_avg_sq_row"].numel() + state["exp_avg_sq_col"].numel(), 5 + 6)


@needs_torch
class LionTest(unittest.TestCase):
    """Lion by hand (Chen et al. 2023): b1 = 0.9, b2 = 0.99, lr = 0.1.
    step 1: g = 0.5:  c = 0.1*0.5 = 0.05 > 0, p = 1 - 0.1 = 0.9, m = 0.01*0.5 = 0.005
    step 2: g = -0.5: c = 0.9*0.005 - 0.05 = -0.0455 < 0, p = 0.9 + 0.1 = 1.0,
            m = 0.99*0.005 - 0.005 = -0.00005"""

    def test_two_steps_by_hand(self):
        for foreach in (True, False):
            with self.subTest(foreach=foreach):
                p = nn.Parameter(torch.ones(3, dtype=torch.float64))
                opt = mg.Lion([p], lr=0.1, foreach=foreach)
                p.grad = torch.full_like(p, 0.5)
                opt.step()
                self.assertTrue(torch.allclose(p.detach(), torch.full_like(p, 0.9)))
                self.assertTrue(torch.allclose(opt.state[p]["exp_avg"], torch.full_like(p, 0.005)))
                p.grad = torch.full_like(p, -0.5)
                opt.step()
                self.assertTrue(torch.allclose(p.detach(), torch.ones_like(p)))
                self.assertTrue(torch.allclose(opt.state[p]["exp_avg"], torch.full_like(p, -0.00005)))


@needs_torch
class MasterWeightOptimizerTest(unittest.TestCase):
    def sgd(self, lr):
        return lambda params: torch.optim.SGD(params, lr=lr)

    def test_small_updates_accumulate_in_the_fp32_master(self):
        # 100 steps of -1e-4 from 1.0: the master reaches 0.99 exactly as fp32
        # arithmetic does; bf16 has a spacing of 2**-8 in [0.5, 1), so the
        # weight shows the master rounded to the nearest 1/256 (0.99 * 256 =
        # 253.44 -> 253/256 = 0.98828125), while SGD on the bf16 weight itself
        # never moves (1 - 1e-4 is within half a spacing of 1.0).
        w = nn.Parameter(torch.ones(4, dtype=torch.bfloat16))
        opt = mg.MasterWeightOptimizer([w], self.sgd(1e-4), torch.bfloat16)
        plain = nn.Parameter(torch.ones(4, dtype=torch.bfloat16))
        plain_opt = torch.optim.SGD([plain], lr=1e-4)
        for _ in range(100):
            opt.backward(w.float().sum())
            opt.step()
            opt.zero_grad()
            plain.float().sum().backward()
            plain_opt.step()
            plain_opt.zero_grad()
        self.assertAlmostEqual(opt.masters[0][0].item(), 0.99, places=5)
        self.assertEqual(w[0].item(), 253 / 256)
        self.assertEqual(plain[0].item(), 1.0)

    def test_gradients_accumulate_in_a_persistent_buffer(self):
        w = nn.Parameter(torch.zeros(2, dtype=torch.bfloat16))
        opt = mg.MasterWeightOptimizer([w], self.sgd(1.0), torch.float32)
        buffer = opt.buffers[0]
        self.assertEqual(buffer.dtype, torch.float32)
        opt.backward((w.float() * 1.0).sum())
        opt.backward((w.float() * 2.0).sum())
        self.assertIsNone(w.grad)            # the 16-bit .grad is folded into the buffer
        self.assertEqual(buffer.tolist(), [3.0, 3.0])
        opt.step()
        self.assertEqual(w.tolist(), [-3.0, -3.0])
        self.assertIsNone(opt.masters[0].grad)   # fp32 grads released after the step
        opt.zero_grad()
        self.assertIs(opt.buffers[0], buffer)    # zeroed, not freed
        self.assertEqual(buffer.tolist(), [0.0, 0.0])

    def test_grad_buffer_takes_the_chosen_dtype(self):
        w = nn.Parameter(torch.zeros(2, dtype=torch.bfloat16))
        self.assertEqual(mg.MasterWeightOptimizer([w], self.sgd(1.0), torch.bfloat16).buffers[0].dtype,
                         torch.bfloat16)

    def test_fp32_parameters_are_their_own_master(self):
        a = nn.Parameter(torch.zeros(2))
        b = nn.Parameter(torch.zeros(2, dtype=torch.bfloat16))
        opt = mg.MasterWeightOptimizer([a, b], self.sgd(1.0), torch.bfloat16)
        self.assertIs(opt.masters[0], a)
        self.assertIsNot(opt.masters[1], b)
        self.assertEqual(opt.buffers[0].dtype, torch.float32)

    def test_static_loss_scale_is_divided_out(self):
        w = nn.Parameter(torch.zeros(2, dtype=torch.float16))
        opt = mg.MasterWeightOptimizer([w], self.sgd(0.5), torch.float16, loss_scale=1024.0)
        opt.backward(w.float().sum())
        opt.step()
        self.assertEqual(w.tolist(), [-0.5, -0.5])

    def test_frozen_parameters_get_no_master(self):
        a = nn.Parameter(torch.zeros(2, dtype=torch.bfloat16), requires_grad=False)
        b = nn.Parameter(torch.zeros(3, dtype=torch.bfloat16))
        opt = mg.MasterWeightOptimizer([a, b], self.sgd(1.0), torch.bfloat16)
        self.assertEqual([m.numel() for m in opt.masters], [3])


class FakeConv1D(nn.Module if torch is not None else object):
    """transformers' Conv1D (GPT-2): weight stored (in, out)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return x @ self.weight + self.bias


def rename(cls, name):
    return type(name, (cls,), {})


class TinyBlock(nn.Module if torch is not None else object):
    def __init__(self, h=16, f=32):
        super().__init__()
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (nn.Linear(h, h) for _ in range(4))
        self.gate_proj, self.up_proj = nn.Linear(h, f), nn.Linear(h, f)
        self.down_proj = nn.Linear(f, h)

    def forward(self, x):
        x = x + self.o_proj(self.q_proj(x) + self.k_proj(x) + self.v_proj(x))
        return x + self.down_proj(torch.nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class TinyLM(nn.Module if torch is not None else object):
    def __init__(self, vocab=50, h=16, layers=2, dtype=None):
        super().__init__()
        self.embed = nn.Embedding(vocab, h)
        self.layers = nn.ModuleList(TinyBlock(h) for _ in range(layers))
        self.lm_head = nn.Linear(h, vocab, bias=False)
        if dtype is not None:
            self.to(dtype)

    def forward(self, input_ids):
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(x)


@needs_torch
class LoraWrapperTest(unittest.TestCase):
    @staticmethod
    def trainable(model):
        return sum(p.numel() for p in model.parameters() if p.requires_grad)

    def test_q_and_v_adapters_by_hand(self):
        # 2 layers x {q, v} x r (in + out) = 2 * 2 * 4 * (16 + 16) = 512
        model = TinyLM()
        names = mg.apply_lora(model, 4, ("q_proj", "v_proj"), 0.0)
        self.assertEqual(len(names), 4)
        self.assertEqual(self.trainable(model), 512)

    def test_all_linear_skips_the_output_head(self):
        # per layer, r = 2: q,k,v,o 4 * 2 * (16 + 16) = 256; gate, up 2 * 2 * (16 + 32) = 192;
        # down 2 * (32 + 16) = 96; 544 per layer, 1088 for two; lm_head not adapted.
        model = TinyLM()
        names = mg.apply_lora(model, 2, ("all-linear",), 0.0)
        self.assertEqual(self.trainable(model), 1088)
        self.assertNotIn("lm_head", names)

    def test_gpt2_conv1d_shape_is_in_by_out(self):
        # c_attn of width 16 -> 3 * 16 = 48 outputs; r = 8: 8 * (16 + 48) = 512
        model = nn.Module()
        model.c_attn = rename(FakeConv1D, "Conv1D")(48, 16)
        mg.apply_lora(model, 8, ("c_attn",), 0.0)
        self.assertEqual(self.trainable(model), 512)

    def test_base_frozen_adapters_fp32_and_output_unchanged_at_init(self):
        torch.manual_seed(0)
        model = TinyLM(dtype=torch.bfloat16)
        ids = torch.randint(0, 50, (2, 5))
        before = model(ids)
        mg.apply_lora(model, 4, ("q_proj", "v_proj"), 0.0)
        after = model(ids)
        self.assertTrue(torch.equal(before, after))     # B starts at zero
        self.assertEqual(after.dtype, torch.bfloat16)
        for name, p in model.named_parameters():
            with self.subTest(name=name):
                self.assertEqual(p.requires_grad, "lora_" in name)
                if "lora_" in name:
                    self.assertEqual(p.dtype, torch.float32)   # PEFT's autocast_adapter_dtype

    def test_targets_matching_nothing_are_an_error(self):
        with self.assertRaises(mg.Unsupported):
            mg.apply_lora(TinyLM(), 4, ("c_attn",), 0.0)


class FakeAllocator:
    """Counters in the shape of torch.cuda's: a current and a peak since the
    last reset; reserved grows in 20-unit segments and never shrinks; the
    device adds a fixed context."""
    CONTEXT = 7

    def __init__(self):
        self.current = self.peak = self.reserved = self.reserved_peak = 0
        self.resets = 0

    def allocate(self, n):
        self.current += n
        self.peak = max(self.peak, self.current)
        if self.current > self.reserved:
            self.reserved = -(-self.current // 20) * 20
        self.reserved_peak = max(self.reserved_peak, self.reserved)

    def free(self, n):
        self.current -= n

    def synchronize(self):
        pass

    def reset_peak(self):
        self.resets += 1
        self.peak, self.reserved_peak = self.current, self.reserved

    def peak_allocated(self):
        return self.peak

    def peak_reserved(self):
        return self.reserved_peak

    def device_used(self):
        return self.reserved + self.CONTEXT


class PhaseBookkeepingTest(unittest.TestCase):
    def step(self, recorder, fake):
        # Weights 100 resident. Forward saves 60, loss peaks 40 above that and
        # keeps 10, backward frees the activations while grads (100) appear,
        # the optimizer step needs a 90 temporary, zero_grad frees the grads.
        with recorder.phase("forward"):
            fake.allocate(60)
        with recorder.phase("loss"):
            fake.allocate(40)
            fake.free(30)
        with recorder.phase("backward"):
            fake.allocate(100)
            fake.free(70)
        with recorder.phase("optimizer step"):
            fake.allocate(90)
            fake.free(90)
        with recorder.phase("zero_grad"):
            fake.free(100)

    def test_the_phase_with_the_largest_allocated_peak_is_kept(self):
        fake = FakeAllocator()
        fake.allocate(100)
        recorder = mg.PhaseRecorder(fake)
        recorder.recording = True
        self.step(recorder, fake)
        # forward 160; loss 200; backward 100+60+10+100 = 270; step 100+100+90 = 290; zero_grad 200
        self.assertEqual(recorder.phase_log, [("forward", 160), ("loss", 200), ("backward", 270),
                                              ("optimizer step", 290), ("zero_grad", 200)])
        self.assertEqual((recorder.allocated_peak, recorder.peak_phase), (290, "optimizer step"))
        self.assertEqual(recorder.reserved_peak, 300)         # 290 rounded up to the 20-unit segment
        self.assertEqual(recorder.device_peak, 300 + FakeAllocator.CONTEXT)
        self.assertEqual(fake.resets, 5)                      # one reset per phase boundary

    def test_warm_up_is_not_recorded(self):
        fake = FakeAllocator()
        recorder = mg.PhaseRecorder(fake)
        fake.allocate(500)
        self.step(recorder, fake)
        self.assertEqual((recorder.phase_log, recorder.allocated_peak, recorder.peak_phase), ([], 0, None))

    def test_a_phase_outside_the_step_is_refused(self):
        recorder = mg.PhaseRecorder(FakeAllocator())
        with self.assertRaises(ValueError):
            with recorder.phase("evaluation"):
                pass


@needs_torch
class TrainingLoopTest(unittest.TestCase):
    def run_loop(self, precision, accumulation, optimizer_factory, dtype=None):
        torch.manual_seed(0)
        model = TinyLM(dtype=dtype)
        p = plan(precision=precision, micro_batch_size=2, sequence_length=8,
                 gradient_accumulation_steps=accumulation)
        optimizer = optimizer_factory(model)
        fake = FakeAllocator()
        recorder = mg.PhaseRecorder(fake)
        before = [q.detach().clone() for q in model.parameters()]
        loss = lambda m, logits, labels: mg.causal_lm_loss(None, logits, labels)
        mg.run_steps(model, optimizer, recorder, p, torch.device("cpu"), 50, warmup=1, steps=3, loss_fn=loss)
        changed = any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
        return recorder, model, changed

    def test_phases_follow_the_step_and_accumulation(self):
        recorder, model, changed = self.run_loop(
            "fp32", 2, lambda m: mg.PlainOptimizer(torch.optim.SGD(m.parameters(), lr=0.1)))
        one_step = ["forward", "loss", "backward"] * 2 + ["optimizer step", "zero_grad"]
        self.assertEqual([name for name, _ in recorder.phase_log], one_step * 3)
        self.assertTrue(changed)
        self.assertTrue(all(q.grad is None for q in model.parameters()))   # zero_grad(set_to_none=True)

    def test_master_weight_recipe_runs_end_to_end(self):
        recorder, model, changed = self.run_loop(
            "mixed-bf16", 1,
            lambda m: mg.MasterWeightOptimizer(list(m.parameters()),
                                               lambda ps: torch.optim.AdamW(ps, lr=1e-2), torch.bfloat16),
            dtype=torch.bfloat16)
        self.assertTrue(changed)
        self.assertEqual(len(recorder.phase_log), 5 * 3)

    def test_autocast_is_on_for_amp_only(self):
        linear = nn.Linear(4, 4)
        x = torch.randn(2, 4)
        with mg.autocast_context(plan(precision="amp-bf16"), "cpu"):
            self.assertEqual(linear(x).dtype, torch.bfloat16)
        with mg.autocast_context(plan(precision="fp32"), "cpu"):
            self.assertEqual(linear(x).dtype, torch.float32)

    def test_loss_of_uniform_logits_is_log_vocab(self):
        # Cross-entropy of equal logits over V classes is ln V, whatever the labels.
        logits = torch.zeros(2, 6, 11)
        labels = torch.randint(0, 11, (2, 6))
        self.assertAlmostEqual(mg.causal_lm_loss(None, logits, labels).item(), math.log(11), places=5)


if __name__ == "__main__":
    unittest.main()
