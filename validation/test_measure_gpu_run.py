"""CPU-side tests of how measure_gpu.py runs on the GPU machine: splitting the
case list into shards, the transformers version gate, the MoE experts switch
and the words that record what ran.

    /usr/bin/python3 -m unittest -v test_measure_gpu_run     (from validation/)
"""
import argparse
import contextlib
import io
import json
import sys
import tempfile
import types
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import measure_gpu as mg  # noqa: E402


def plan_of(model, **training):
    return mg.plan_scenario({"model": model, "training": {"sequence_length": 256, **training}}, "case")


class ShardTest(unittest.TestCase):
    def args(self, *argv):
        parser = argparse.ArgumentParser()
        parser.add_argument("cases", nargs="*")
        parser.add_argument("--all", action="store_true")
        parser.add_argument("--shard", type=mg.shard)
        return parser.parse_args(list(argv))

    def test_shards_cover_every_case_once(self):
        every = mg.case_files(self.args("--all"))
        self.assertGreaterEqual(len(every), 30)
        for count in (1, 2, 3, 5):
            parts = [mg.case_files(self.args("--all", "--shard", f"{k}/{count}")) for k in range(1, count + 1)]
            seen = [f for part in parts for f in part]
            self.assertEqual(sorted(seen), every)                    # nothing lost, nothing twice
            self.assertLessEqual(max(map(len, parts)) - min(map(len, parts)), 1)   # even halves

    def test_bad_shards_are_refused_naming_the_form(self):
        for text in ("0/2", "3/2", "1", "a/b", "1/0"):
            with self.subTest(text=text), self.assertRaises(argparse.ArgumentTypeError) as caught:
                mg.shard(text)
            self.assertIn(text, str(caught.exception))

    def test_command_line_refuses_a_bad_shard_with_status_2(self):
        with contextlib.redirect_stderr(io.StringIO()) as err, self.assertRaises(SystemExit) as caught:
            mg.main(["--all", "--dry-run", "--shard", "4/3"])
        self.assertEqual(caught.exception.code, 2)
        self.assertIn("--shard", err.getvalue())

    def test_dry_run_of_a_shard_lists_only_its_cases(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(mg.main(["--all", "--dry-run", "--shard", "2/2"]), mg.EXIT_OK)
        names = [line.split(":")[0] for line in out.getvalue().splitlines()]
        every = sorted(p.stem for p in mg.CASES.glob("*.json"))
        self.assertEqual(names, every[1::2])


class TransformersVersionTest(unittest.TestCase):
    def test_release_and_development_versions(self):
        self.assertEqual(mg.transformers_version("5.17.0"), (5, 17))
        self.assertEqual(mg.transformers_version("4.57.0.dev0"), (4, 57))
        self.assertEqual(mg.transformers_version("4.46"), (4, 46))
        self.assertGreaterEqual(mg.transformers_version("5.0.0rc1"), (5, 0))
        self.assertLess(mg.transformers_version("4.56.2"), (5, 0))


class RoutedExpertsTest(unittest.TestCase):
    def test_moe_families_are_recognised_by_their_config_keys(self):
        cases = sorted(mg.CASES.glob("mixtral-*.json"))
        self.assertTrue(cases)
        for path in cases:
            self.assertTrue(mg.plan_scenario(json.loads(path.read_text()), path.stem).routed_experts, path.name)
        self.assertTrue(plan_of({"preset": "qwen1.5-moe-a2.7b"}).routed_experts)     # num_experts
        self.assertTrue(plan_of({"preset": "deepseek-v2-lite"}).routed_experts)      # n_routed_experts

    def test_dense_models_have_none(self):
        for preset in ("gpt2", "llama-2-7b", "qwen2.5-0.5b"):
            self.assertFalse(plan_of({"preset": preset}).routed_experts, preset)
        # A config that says one expert (or none) is dense.
        self.assertFalse(plan_of({"model_type": "mixtral", "num_local_experts": 1}).routed_experts)


class ImplementationWordsTest(unittest.TestCase):
    def model(self, **config):
        return types.SimpleNamespace(config=types.SimpleNamespace(**config))

    def test_what_the_model_reports_wins_over_what_was_asked(self):
        plan = plan_of({"preset": "gpt2"}, attention="flash")
        self.assertEqual(mg.implementation_words(plan, self.model(_attn_implementation="eager"), None),
                         "attention eager")

    def test_moe_checkpointing_and_lora_are_named(self):
        plan = plan_of({"model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 2},
                       activation_checkpointing="full", finetuning="lora")
        words = mg.implementation_words(
            plan, self.model(_attn_implementation="sdpa", _experts_implementation="eager"), "peft 0.17.1")
        self.assertEqual(words, "attention sdpa, experts eager, non-reentrant checkpointing per decoder layer, "
                                "LoRA by peft 0.17.1")

    def test_older_transformers_without_the_switch_ran_the_eager_loop(self):
        plan = plan_of({"model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 2})
        self.assertIn("experts eager", mg.implementation_words(plan, self.model(_attn_implementation="sdpa"), None))


class SnapshotOptionTest(unittest.TestCase):
    def test_the_child_is_told_where_to_dump(self):
        calls = []

        def fake_run(command, **kwargs):
            calls.append(command)
            return types.SimpleNamespace(returncode=mg.EXIT_UNSUPPORTED, stderr="", stdout="")

        case = sorted(mg.CASES.glob("*.json"))[0]
        with tempfile.TemporaryDirectory() as tmp:
            real = mg.subprocess.run
            mg.subprocess.run = fake_run
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    status = mg.main([str(case), "--out", tmp, "--snapshot", tmp + "/snapshots"])
            finally:
                mg.subprocess.run = real
        self.assertEqual(status, mg.EXIT_UNSUPPORTED)
        self.assertEqual(len(calls), 1)
        self.assertIn("--snapshot", calls[0])
        self.assertEqual(calls[0][calls[0].index("--snapshot") + 1], tmp + "/snapshots")


if __name__ == "__main__":
    unittest.main()
