// The six defects of issue 24, each held to what the stack's code or a
// published run says: torchtitan's FSDP under pipeline parallelism, LitGPT's
// FSDP checkpointing, releases of a stack (`training.framework =
// NAME@RELEASE`), the Hugging Face Trainer's and PEFT's defaults, paged
// optimizer states in CUDA managed memory, and one meaning of torchtune's
// chunked loss in the docs. Sources: docs/frameworks.md.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/account/estimate.h"
#include "core/scenario/frameworks.h"
#include "core/search/layout_search.h"
#include "core/report/report.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"
#include "preset_scenario.h"

namespace trainmem {
namespace {

// torchtitan distributed/fsdp.py get_fsdp_reshard_after_forward_policy:
// "default" is `not pp_enabled`; PyTorch's pipelining (stage.py
// backward_maybe_with_nosync) reduces and reshards after the last micro-batch.
// The command of issue 24, defect 2.
TEST(FrameworkReleases, TorchtitanWithPipelineKeepsItsBlocksGathered) {
    const Scenario s = presetWith("llama-3.1-405b",
                                  {"training.framework=torchtitan", "parallelism.pipeline=8", "parallelism.tensor=8",
                                   "parallelism.data=8", "parallelism.zero_stage=3",
                                   "training.gradient_accumulation_steps=8", "training.activation_checkpointing=full"});
    EXPECT_FALSE(s.parallelism.reshard_after_forward);
    EXPECT_EQ(s.parallelism.fsdp_gradient_sync, FsdpGradientSync::LastMicrobatch);
    EXPECT_EQ(s.training.checkpointing, Checkpointing::Full);  // explicit
    // Without PP, FSDP's defaults.
    const Scenario flat = presetWith("llama-3.1-405b", {"training.framework=torchtitan", "parallelism.data=64",
                                                        "parallelism.zero_stage=3"});
    EXPECT_TRUE(flat.parallelism.reshard_after_forward);
    EXPECT_EQ(flat.parallelism.fsdp_gradient_sync, FsdpGradientSync::EveryMicrobatch);
    // An explicit key still wins, and a file reads the same, whatever order.
    const Scenario kept = presetWith("llama-3.1-405b", {"parallelism.reshard_after_forward=true",
                                                        "training.framework=torchtitan", "parallelism.pipeline=8",
                                                        "parallelism.data=8", "parallelism.zero_stage=3",
                                                        "training.gradient_accumulation_steps=8"});
    EXPECT_TRUE(kept.parallelism.reshard_after_forward);
    EXPECT_EQ(kept.parallelism.fsdp_gradient_sync, FsdpGradientSync::LastMicrobatch);
    const Expected<Scenario> file = scenarioFromJson(
        {{"format", "trainmem-scenario"},
         {"version", 2},
         {"model", {{"preset", "llama-3.1-405b"}}},
         {"parallelism", {{"pipeline", 8}, {"data", 8}, {"tensor", 8}, {"zero_stage", 3}}},
         {"training", {{"framework", "torchtitan"}, {"gradient_accumulation_steps", 8}}}});
    ASSERT_TRUE(file.ok()) << file.error().text();
    EXPECT_FALSE(file->parallelism.reshard_after_forward);
    EXPECT_EQ(file->parallelism.fsdp_gradient_sync, FsdpGradientSync::LastMicrobatch);
    // The readout lists them as the framework's, not overridden.
    int listed = 0;
    for (const FrameworkValue& v : frameworkValues(*file))
        if (v.key == "parallelism.reshard_after_forward" || v.key == "parallelism.fsdp_gradient_sync") {
            EXPECT_FALSE(v.overridden) << v.key;
            ++listed;
        }
    EXPECT_EQ(listed, 2);
}

// LitGPT v0.5.13 litgpt/finetune/full.py: `if devices * num_nodes > 1:
// FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block})`.
TEST(FrameworkReleases, LitgptUnderFsdpCheckpointsEveryBlock) {
    const Scenario fsdp = presetWith("llama-3.1-8b", {"training.framework=litgpt", "parallelism.data=4",
                                                      "parallelism.zero_stage=3"});
    EXPECT_EQ(fsdp.training.checkpointing, Checkpointing::Full);
    const Scenario one = presetWith("llama-3.1-8b", {"training.framework=litgpt"});
    EXPECT_EQ(one.training.checkpointing, Checkpointing::None);
    const Scenario explicit_none = presetWith(
        "llama-3.1-8b", {"training.framework=litgpt", "parallelism.data=4", "parallelism.zero_stage=3",
                         "training.activation_checkpointing=none"});
    EXPECT_EQ(explicit_none.training.checkpointing, Checkpointing::None);
}

// torchtitan's releases (pytorch/torchtitan): #881 made fused AdamW the
// default on 2025-02-24; #1094 (2025-07-28, first in v0.2.0) made the
// embedding and [norm, output] units of their own; #2357 (2026-03-23) made
// `selective` the op-level policy. A run of Dec 2024 had none of them.
TEST(FrameworkReleases, TorchtitanAtARelease) {
    const Scenario dec = presetWith("llama-3.1-8b", {"training.framework=torchtitan@2024-12-31",
                                                     "parallelism.data=8", "parallelism.zero_stage=3"});
    EXPECT_EQ(dec.training.framework_release, "3f20451bc");
    EXPECT_EQ(dec.training.optimizer_impl, OptimizerImpl::ForEach);
    EXPECT_EQ(dec.parallelism.fsdp_ends, FsdpEnds::Root);
    EXPECT_EQ(dec.training.checkpointing, Checkpointing::TorchtitanLayer);
    EXPECT_EQ(dec.training.checkpoint_every, 2);
    EXPECT_EQ(dec.training.precision, Precision::AmpBf16);  // FSDP's MixedPrecisionPolicy
    // Mixed precision came only through FSDP then: one GPU trained in fp32.
    EXPECT_EQ(presetWith("llama-3.1-8b", {"training.framework=torchtitan@2024-12"}).training.precision,
              Precision::Fp32);

    const Scenario v010 = presetWith("llama-3.1-8b", {"training.framework=torchtitan@v0.1.0"});
    EXPECT_EQ(v010.training.optimizer_impl, OptimizerImpl::Fused);
    EXPECT_EQ(v010.parallelism.fsdp_ends, FsdpEnds::Root);
    EXPECT_EQ(v010.training.precision, Precision::AmpBf16);
    const Scenario v020 = presetWith("llama-3.1-8b", {"training.framework=torchtitan@2025-11-01"});
    EXPECT_EQ(v020.training.framework_release, "v0.2.0");
    EXPECT_EQ(v020.parallelism.fsdp_ends, FsdpEnds::OwnUnitsHeadKept);
    EXPECT_EQ(v020.training.checkpointing, Checkpointing::TorchtitanLayer);
    const Scenario newest = presetWith("llama-3.1-8b", {"training.framework=torchtitan"});
    EXPECT_TRUE(newest.training.framework_release.empty());
    EXPECT_EQ(newest.training.checkpointing, Checkpointing::Op);
    EXPECT_EQ(newest.training.optimizer_impl, OptimizerImpl::Fused);

    // Written with its release, read back the same.
    const Expected<Scenario> back = scenarioFromJson(scenarioToJson(v010));
    ASSERT_TRUE(back.ok()) << back.error().text();
    EXPECT_EQ(scenarioToJson(v010)["training"]["framework"], "torchtitan@v0.1.0");
    EXPECT_EQ(*back, v010);
}

TEST(FrameworkReleases, AnUnknownReleaseIsRefusedWithTheReleasesRead) {
    Expected<Scenario> s = loadPreset("llama-3.1-8b");
    ASSERT_TRUE(s.ok());
    for (const char* bad : {"training.framework=torchtitan@v9", "training.framework=torchtitan@2023-01-01",
                            "training.framework=custom@v1", "training.framework=titan@v0.1.0"}) {
        const Status st = applySetting(*s, bad);
        ASSERT_FALSE(st.ok()) << bad;
        EXPECT_EQ(st.error().field, "training.framework") << bad;
    }
    const Status st = applySetting(*s, "training.framework=torchtitan@v9");
    EXPECT_NE(st.error().message.find("v0.1.0 (2025-06-17)"), std::string::npos) << st.error().message;
    EXPECT_NE(applySetting(*s, "training.framework=titan").error().message.find("torchtitan"), std::string::npos);
}

// transformers 00349ae87 training_args.py: optim "adamw_torch_fused" (torch
// >= 2.8), gradient_checkpointing False, bf16 False; PEFT LoraConfig r = 8,
// llama's target modules q_proj, v_proj.
TEST(FrameworkReleases, HuggingFaceTrainerIsNotCustom) {
    const Scenario custom = presetWith("llama-3.1-8b", {"training.framework=custom"});
    const Scenario hf = presetWith("llama-3.1-8b", {"training.framework=hf-trainer"});
    EXPECT_NE(estimate(hf)->peak.allocated_bytes, estimate(custom)->peak.allocated_bytes);
    EXPECT_EQ(hf.training.optimizer, OptimizerKind::AdamW);
    EXPECT_EQ(hf.training.optimizer_impl, OptimizerImpl::Fused);
    EXPECT_EQ(hf.training.precision, Precision::Fp32);
    EXPECT_EQ(hf.training.checkpointing, Checkpointing::None);
    const Scenario lora = presetWith("llama-3.1-8b", {"training.framework=hf-trainer", "training.finetuning=lora"});
    EXPECT_EQ(lora.training.lora_rank, 8);
    EXPECT_EQ(lora.training.lora_targets, (std::vector<std::string>{"q_proj", "v_proj"}));
}

// torchtune's README at 0217d44c2 (2024-05-09): "1 x RTX 4090 | Full finetune *
// | Llama2-7B | Batch Size = 4, Seq Length = 2048 | 24.1 GB", "*= Uses
// PagedAdamW from bitsandbytes" (recipes/configs/llama2/7B_full_low_memory.yaml:
// bitsandbytes.optim.PagedAdamW, optimizer_in_bwd: True, activation
// checkpointing, bf16, torch.nn.CrossEntropyLoss). It ran: the 50 GiB of fp32
// Adam states live in CUDA managed memory, most of it paged out to the host.
TEST(FrameworkReleases, PagedStatesThatDoNotFitPageOutAndStillFit) {
    const Scenario s = presetWith(
        "llama-2-7b",
        {"training.framework=torchtune", "training.micro_batch_size=4", "training.sequence_length=2048",
         "training.optimizer=adamw", "training.optimizer_paged=true", "training.optimizer_state_dtype=fp32",
         "training.optimizer_in_backward=true", "training.loss=standard", "hardware.gpu=RTX4090-24GB"});
    const Expected<Estimate> e = estimate(s);
    ASSERT_TRUE(e.ok()) << e.error().text();
    EXPECT_TRUE(e->fits);
    EXPECT_GT(e->peak.managed_bytes, 40 * kGiB);
    EXPECT_GT(e->managed_host_bytes, 0);
    EXPECT_LE(e->peak.device_bytes, e->capacity_bytes);
    EXPECT_GE(e->host_bytes, e->managed_host_bytes);
    const nlohmann::json doc = estimateToJson(s, *e);
    EXPECT_EQ(doc["fits"], true);
    EXPECT_EQ(doc["managed_host_bytes"], e->managed_host_bytes);
    bool warned = false;
    for (const auto& w : doc["warnings"]) warned = warned || w.get<std::string>().find("managed") != std::string::npos;
    EXPECT_TRUE(warned) << doc["warnings"].dump();
    // The layout search agrees: the run's own layout (one GPU, this
    // micro-batch) is among those that fit.
    LayoutSearchOptions o;
    o.gpus = 1;
    o.top = 1000;
    const Expected<LayoutSearchResult> found = searchLayouts(s, o);
    ASSERT_TRUE(found.ok()) << found.error().text();
    bool listed = false;
    for (const RankedLayout& l : found->layouts)
        listed = listed || (l.layout.micro_batch_size == 4 && l.layout.checkpointing == Checkpointing::Full &&
                            l.estimate.fits && l.estimate.managed_host_bytes > 0);
    EXPECT_TRUE(listed) << found->fitting << " layouts fit";
    // What the allocator holds does not fit a smaller card: then it does not fit.
    Scenario small = s;
    ASSERT_TRUE(applySetting(small, "hardware.memory_gib=8").ok());
    EXPECT_FALSE(estimate(small)->fits);
}

// torchtune's loss is `chunked_output` in every document; `chunked` is not
// torchtune's (issue 24, defect 4).
TEST(FrameworkReleases, TorchtunesChunkedLossHasOneNameInTheDocs) {
    for (const char* doc : {"memory-model.md", "scenario-format.md", "frameworks.md", "accuracy.md"}) {
        std::ifstream in(std::string(TRAINMEM_VALIDATION_DIR) + "/../docs/" + doc);
        ASSERT_TRUE(in) << doc;
        std::string line;
        int n = 0;
        while (std::getline(in, line)) {
            ++n;
            for (const char* cls : {"CEWithChunkedOutputLoss", "LinearCrossEntropyLoss"})
                if (line.find(cls) != std::string::npos)
                    EXPECT_NE(line.find("chunked_output"), std::string::npos) << doc << ":" << n << " names " << cls;
            if (line.starts_with("- **chunked**"))
                EXPECT_EQ(line.find("torchtune"), std::string::npos) << doc << ":" << n;
        }
    }
}

}  // namespace
}  // namespace trainmem
