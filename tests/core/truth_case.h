#pragma once
// One case of a ground-truth file of validation/ (activations, compile),
// as the C++ tests read it: the model from its config.json keys through the
// importer (the one way a config.json becomes a model, so a family the
// importer reads wrongly fails the truth), the training keys by name.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/model/hf_config.h"
#include "core/training/training_config.h"

namespace trainmem {

// The case's model from its config.json keys, through the importer: the one
// way a config.json becomes a model, so that a family the importer reads
// wrongly (a missing q/k norm, a wrong default) fails here.
inline ModelConfig modelOf(const nlohmann::json& c) {
    const Expected<ImportedModel> imported = importHuggingFaceConfig(c);
    EXPECT_TRUE(imported.ok()) << (imported.ok() ? "" : imported.error().text());
    if (!imported.ok()) return ModelConfig{};
    EXPECT_TRUE(imported->warnings.empty()) << c.dump() << ": " << imported->warnings.front();
    return imported->model;
}

inline TrainingConfig trainingOf(const nlohmann::json& c) {
    TrainingConfig t;
    t.micro_batch_size = c.at("micro_batch_size");
    t.sequence_length = c.at("sequence_length");
    t.precision = parsePrecision(c.at("precision").get<std::string>()).value();
    t.attention = parseAttention(c.at("attention").get<std::string>()).value();
    t.kernels = parseKernelProfile(c.at("kernels").get<std::string>()).value();
    t.checkpointing = parseCheckpointing(c.at("checkpointing").get<std::string>()).value();
    t.loss = parseLoss(c.at("loss").get<std::string>()).value();
    t.finetuning = parseFinetuning(c.at("finetuning").get<std::string>()).value();
    t.lora_rank = c.value("lora_rank", t.lora_rank);
    t.lora_dropout = c.value("lora_dropout", t.lora_dropout);
    if (c.contains("lora_targets")) t.lora_targets = c.at("lora_targets").get<std::vector<std::string>>();
    return t;
}

}  // namespace trainmem
