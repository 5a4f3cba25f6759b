// validate(Scenario): each rule refuses what the frameworks refuse, names the
// field and says what is allowed. Model sizes are the published config.json
// values of the presets (Llama-2-7B: 32 heads, 32 layers; Llama-3.1-8B: 8 KV
// heads; Mixtral-8x7B: 8 experts).
#include <gtest/gtest.h>

#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_file.h"
#include "core/account/scenario_validate.h"

namespace trainmem {
namespace {

Scenario preset(const std::string& name) {
    auto s = loadPreset(name);
    EXPECT_TRUE(s.ok()) << name << ": " << s.error().text();
    return s.ok() ? *s : Scenario{};
}

// Applies the settings (each must be accepted) and returns validate's error.
Error refused(const std::string& model, std::initializer_list<const char*> settings) {
    Scenario s = preset(model);
    for (const char* setting : settings) {
        Status st = applySetting(s, setting);
        EXPECT_TRUE(st.ok()) << setting << ": " << st.error().text();
    }
    Status st = validate(s);
    EXPECT_FALSE(st.ok()) << "accepted";
    return st.ok() ? Error{} : st.error();
}

void accepted(const std::string& model, std::initializer_list<const char*> settings) {
    Scenario s = preset(model);
    for (const char* setting : settings) ASSERT_TRUE(applySetting(s, setting).ok()) << setting;
    Status st = validate(s);
    EXPECT_TRUE(st.ok()) << st.error().text();
}

bool mentions(const Error& e, const std::string& text) { return e.message.find(text) != std::string::npos; }

TEST(ValidateScenario, EveryPresetIsValid) {
    for (const auto& p : listPresets()) {
        auto s = loadPreset(p.name);
        ASSERT_TRUE(s.ok()) << p.name << ": " << s.error().text();
        Status st = validate(*s);
        EXPECT_TRUE(st.ok()) << p.name << ": " << st.error().text();
    }
}

TEST(ValidateScenario, SizesMustBePositive) {
    Error e = refused("llama-2-7b", {"training.micro_batch_size=0"});
    EXPECT_EQ(e.text(), "training.micro_batch_size: must be a positive integer (got 0)");
    e = refused("llama-2-7b", {"training.sequence_length=-2048"});
    EXPECT_EQ(e.field, "training.sequence_length");
    e = refused("llama-2-7b", {"parallelism.data=0"});
    EXPECT_EQ(e.field, "parallelism.data");
    e = refused("llama-2-7b", {"training.lora_rank=0"});
    EXPECT_EQ(e.field, "training.lora_rank");
    e = refused("llama-2-7b", {"parallelism.zero_stage=4"});
    EXPECT_EQ(e.text(), "parallelism.zero_stage: must be 0, 1, 2 or 3 (got 4)");
    Scenario no_layers = preset("llama-2-7b");
    no_layers.model.num_layers = 0;
    Status st = validate(no_layers);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().field.rfind("model.", 0), 0u) << "the model's own check names its key: " << st.error().text();
}

TEST(ValidateScenario, TensorDegreeMustDivideHeadsKvHeadsAndWidths) {
    Error e = refused("llama-2-7b", {"parallelism.tensor=3", "parallelism.gpus=3"});
    EXPECT_EQ(e.field, "parallelism.tensor");
    EXPECT_TRUE(mentions(e, "model.num_attention_heads (32)")) << e.message;
    // Llama-3.1-8B: 32 query heads, 8 KV heads. t = 16 divides the heads, not the KV groups.
    e = refused("llama-3.1-8b", {"parallelism.tensor=16"});
    EXPECT_EQ(e.field, "parallelism.tensor");
    EXPECT_TRUE(mentions(e, "model.num_key_value_heads (8)")) << e.message;
    // 11000 = 2^3 x 1375 is not a multiple of 16.
    e = refused("llama-2-7b", {"model.intermediate_size=11000", "parallelism.tensor=16"});
    EXPECT_TRUE(mentions(e, "model.intermediate_size (11000)")) << e.message;
    accepted("llama-3.1-8b", {"parallelism.tensor=8"});
}

TEST(ValidateScenario, PipelineNeedsALayerPerStageAndChunk) {
    Error e = refused("llama-2-7b", {"parallelism.pipeline=33"});
    EXPECT_EQ(e.field, "parallelism.pipeline");
    EXPECT_TRUE(mentions(e, "(32)"));
    e = refused("llama-2-7b", {"parallelism.pipeline=4", "parallelism.virtual_stages=2"});
    EXPECT_EQ(e.field, "parallelism.virtual_stages");
    EXPECT_TRUE(mentions(e, "interleaved-1f1b"));
    e = refused("llama-2-7b", {"parallelism.pipeline_schedule=interleaved-1f1b"});
    EXPECT_EQ(e.field, "parallelism.pipeline_schedule");
    e = refused("llama-2-7b", {"parallelism.pipeline=16", "parallelism.pipeline_schedule=interleaved-1f1b",
                               "parallelism.virtual_stages=4"});
    EXPECT_EQ(e.field, "parallelism.virtual_stages");
    // Megatron-LM's even interleaved split: 16 x 2 chunks do not divide 126 layers, 4 x 5 divide 80.
    e = refused("llama-3.1-405b", {"parallelism.tensor=8", "parallelism.pipeline=16", "parallelism.data=8",
                                   "parallelism.pipeline_schedule=interleaved-1f1b", "parallelism.virtual_stages=2"});
    EXPECT_TRUE(mentions(e, "(32) must divide model.num_hidden_layers (126)")) << e.message;
    accepted("llama-3.1-70b", {"parallelism.tensor=4", "parallelism.pipeline=4",
                               "parallelism.pipeline_schedule=interleaved-1f1b", "parallelism.virtual_stages=5"});
}

TEST(ValidateScenario, MicrobatchesMustAgreeWithAccumulation) {
    Error e = refused("llama-2-7b", {"parallelism.pipeline=4", "parallelism.microbatches=8",
                                     "training.gradient_accumulation_steps=4"});
    EXPECT_EQ(e.field, "parallelism.microbatches");
    EXPECT_TRUE(mentions(e, "training.gradient_accumulation_steps (4)"));
    e = refused("llama-2-7b", {"parallelism.microbatches=8"});
    EXPECT_EQ(e.field, "parallelism.microbatches");
    accepted("llama-2-7b", {"parallelism.pipeline=4", "parallelism.microbatches=8"});
    accepted("llama-2-7b", {"parallelism.pipeline=4", "parallelism.microbatches=8",
                            "training.gradient_accumulation_steps=8"});
}

// torchtune's recipes refuse optimizer_in_bwd with gradient accumulation
// ("Requires gradient_accumulation_steps=1"): the step runs as each gradient
// completes, so nothing can be summed over micro-batches (nor over a
// pipeline stage's micro-batches).
TEST(ValidateScenario, OptimizerInBackwardCannotAccumulate) {
    Error e = refused("llama-2-7b", {"training.optimizer_in_backward=true", "training.gradient_accumulation_steps=4"});
    EXPECT_EQ(e.field, "training.optimizer_in_backward");
    EXPECT_TRUE(mentions(e, "training.gradient_accumulation_steps")) << e.message;
    e = refused("llama-2-7b", {"training.optimizer_in_backward=true", "parallelism.pipeline=4"});
    EXPECT_EQ(e.field, "training.optimizer_in_backward");
    EXPECT_TRUE(mentions(e, "parallelism.pipeline")) << e.message;
    accepted("llama-2-7b", {"training.optimizer_in_backward=true"});
}

TEST(ValidateScenario, ExpertDegreeNeedsAMoeModelAndMustDivide) {
    Error e = refused("mixtral-8x7b", {"parallelism.data=6", "parallelism.expert=3"});
    EXPECT_EQ(e.field, "parallelism.expert");
    EXPECT_TRUE(mentions(e, "number of experts (8)")) << e.message;
    e = refused("mixtral-8x7b", {"parallelism.data=2", "parallelism.expert=4"});
    EXPECT_TRUE(mentions(e, "data x context (2)")) << e.message;
    e = refused("llama-2-7b", {"parallelism.data=2", "parallelism.expert=2"});
    EXPECT_TRUE(mentions(e, "mixture-of-experts")) << e.message;
    accepted("mixtral-8x7b", {"parallelism.data=8", "parallelism.expert=8"});
}

TEST(ValidateScenario, ContextDegreeSplitsTheSequenceIntoTwiceAsManyChunks) {
    Error e = refused("llama-2-7b", {"training.sequence_length=4100", "parallelism.context=4"});
    EXPECT_EQ(e.field, "parallelism.context");
    EXPECT_TRUE(mentions(e, "2 x context = 8")) << e.message;
    accepted("llama-2-7b", {"training.sequence_length=4096", "parallelism.context=4"});
}

TEST(ValidateScenario, GpuCountMustBeTheProductOfTheDegrees) {
    Error e = refused("llama-2-7b", {"parallelism.data=8", "parallelism.tensor=2", "parallelism.gpus=8"});
    EXPECT_EQ(e.text(), "parallelism.gpus: 8 GPUs given, but data x tensor x pipeline x context = 8 x 2 x 1 x 1 = 16");
}

TEST(ValidateScenario, ShardingCombinationsFollowTheFrameworks) {
    Error e = refused("llama-2-7b", {"parallelism.sequence_parallel=true"});
    EXPECT_EQ(e.field, "parallelism.sequence_parallel");
    e = refused("llama-2-7b", {"parallelism.data=8", "parallelism.offload_optimizer=true"});
    EXPECT_EQ(e.field, "parallelism.offload_optimizer");
    e = refused("llama-2-7b", {"parallelism.data=8", "parallelism.zero_stage=2", "parallelism.offload_parameters=true"});
    EXPECT_EQ(e.field, "parallelism.offload_parameters");
    e = refused("llama-2-7b", {"parallelism.data=8", "parallelism.zero_stage=3", "parallelism.shard_group=3"});
    EXPECT_EQ(e.field, "parallelism.shard_group");
    e = refused("llama-2-7b", {"parallelism.data=8", "parallelism.shard_group=4"});
    EXPECT_TRUE(mentions(e, "zero_stage"));
    e = refused("llama-2-7b", {"parallelism.tensor=4", "parallelism.sequence_parallel=true",
                               "training.sequence_length=1026"});
    EXPECT_EQ(e.field, "parallelism.sequence_parallel");
    accepted("llama-2-7b", {"parallelism.data=8", "parallelism.zero_stage=3", "parallelism.shard_group=4",
                            "parallelism.offload_optimizer=true", "parallelism.offload_parameters=true"});
}

TEST(ValidateScenario, FinetuningSettings) {
    Error e = refused("llama-2-7b", {"training.finetuning=qlora", "training.precision=fp32"});
    EXPECT_EQ(e.field, "training.precision");
    EXPECT_TRUE(mentions(e, "16 bits"));
    e = refused("llama-2-7b", {"training.finetuning=lora", "training.lora_targets=q_proj,value_proj"});
    EXPECT_EQ(e.field, "training.lora_targets");
    EXPECT_TRUE(mentions(e, "\"value_proj\"")) << e.message;
    e = refused("llama-2-7b", {"training.finetuning=lora", "training.lora_targets="});
    EXPECT_EQ(e.field, "training.lora_targets");
    e = refused("llama-2-7b", {"training.lora_dropout=1"});
    EXPECT_EQ(e.field, "training.lora_dropout");
    e = refused("llama-2-7b", {"training.optimizer=adamw-8bit", "training.optimizer_state_dtype=bf16"});
    EXPECT_EQ(e.field, "training.optimizer_state_dtype");
    e = refused("llama-2-7b", {"training.activation_checkpointing=every-k", "training.checkpoint_every=33"});
    EXPECT_EQ(e.field, "training.checkpoint_every");
    accepted("llama-2-7b", {"training.finetuning=qlora", "training.precision=amp-bf16",
                            "training.lora_targets=all-linear"});
}

TEST(ValidateScenario, HardwareSettings) {
    Error e = refused("llama-2-7b", {"hardware.gpu=H100"});
    EXPECT_EQ(e.field, "hardware.gpu");
    EXPECT_TRUE(mentions(e, "H100-80GB")) << "lists the catalogue: " << e.message;
    e = refused("llama-2-7b", {"hardware.gpu=custom"});
    EXPECT_EQ(e.field, "hardware.memory_gib");
    e = refused("llama-2-7b", {"hardware.gpu=custom", "hardware.memory_gib=-1"});
    EXPECT_EQ(e.field, "hardware.memory_gib");
    e = refused("llama-2-7b", {"hardware.fragmentation=1"});
    EXPECT_EQ(e.field, "hardware.fragmentation");
    e = refused("llama-2-7b", {"hardware.nccl_mib_per_group=-5"});
    EXPECT_EQ(e.field, "hardware.nccl_mib_per_group");
    accepted("llama-2-7b", {"hardware.gpu=custom", "hardware.memory_gib=48"});
}

TEST(ValidateScenario, HugeValuesAreRefusedBeforeTheyCanOverflow) {
    Error e = refused("llama-2-7b", {"training.sequence_length=1000000000"});
    EXPECT_EQ(e.field, "training.sequence_length");
    e = refused("llama-2-7b", {"parallelism.data=65536", "parallelism.tensor=32", "parallelism.pipeline=32",
                               "parallelism.context=65536"});
    EXPECT_EQ(e.field, "parallelism.data");
    e = refused("llama-2-7b", {"training.micro_batch_size=1048576", "training.sequence_length=1048576"});
    EXPECT_EQ(e.field, "training.micro_batch_size");
}

}  // namespace
}  // namespace trainmem
