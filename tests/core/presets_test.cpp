// Presets: where the folder is, and listing and loading both kinds.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/scenario/presets.h"

namespace trainmem {
namespace {

namespace fs = std::filesystem;

// The source tree's presets, whatever folder a test points the loader at.
const fs::path kSourcePresets = fs::path(TRAINMEM_TEST_DATA_DIR) / ".." / ".." / "presets";

TEST(Presets, NamesAreUniqueAcrossModelsAndScenarios) {
    std::set<std::string> names;
    for (const auto& p : listPresets()) EXPECT_TRUE(names.insert(p.name).second) << p.name << " twice";
    EXPECT_TRUE(names.count("llama-3.1-8b"));
    EXPECT_TRUE(names.count("llama3.1-8b-fsdp-8xh100"));
}

class PresetsFolder : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("trainmem-presets-test-" + std::to_string(::getpid()));
        fs::create_directories(dir_ / "models");
        fs::create_directories(dir_ / "scenarios");
        const fs::path source = kSourcePresets / "models" / "gpt2.json";
        fs::copy_file(source, dir_ / "models" / "tiny.json");
        std::ofstream(dir_ / "scenarios" / "tiny-run.json") << R"({"description": "a run", "model": {"preset": "tiny"}})";
    }
    void TearDown() override {
        setPresetsDirectory({});
        ::unsetenv("TRAINMEM_PRESETS");
        fs::remove_all(dir_);
    }
    fs::path dir_;
};

TEST_F(PresetsFolder, ExplicitFolderComesFirstThenTheEnvironment) {
    ::setenv("TRAINMEM_PRESETS", dir_.c_str(), 1);
    EXPECT_EQ(presetsDirectory(), dir_);
    const fs::path other = dir_ / "scenarios";
    setPresetsDirectory(other);
    EXPECT_EQ(presetsDirectory(), other);
    setPresetsDirectory({});
    EXPECT_EQ(presetsDirectory(), dir_);
    ::unsetenv("TRAINMEM_PRESETS");
    EXPECT_NE(presetsDirectory(), dir_);
}

TEST_F(PresetsFolder, ListsAndLoadsBothKinds) {
    setPresetsDirectory(dir_);
    const auto presets = listPresets();
    ASSERT_EQ(presets.size(), 2u);
    EXPECT_EQ(presets[0].name, "tiny");
    EXPECT_EQ(presets[0].kind, PresetKind::Model);
    EXPECT_EQ(presets[0].description, "openai-community/gpt2, 124.44M parameters");  // GPT-2's published count
    EXPECT_EQ(presets[1].name, "tiny-run");
    EXPECT_EQ(presets[1].description, "a run");
    auto run = loadPreset("tiny-run");
    ASSERT_TRUE(run.ok()) << run.error().text();
    EXPECT_EQ(run->model_preset, "tiny");
    EXPECT_EQ(loadPreset("../models/tiny").error().field, "preset") << "names cannot leave the folder";
    EXPECT_NE(loadModelPreset("tiny-run").error().message.find("scenario preset"), std::string::npos);
    fs::copy_file(dir_ / "models" / "tiny.json", dir_ / "scenarios" / "tiny.json");
    EXPECT_NE(loadPreset("tiny").error().message.find("names both"), std::string::npos);
}

}  // namespace
}  // namespace trainmem
