// Hostile input files and JSON text (issue 15, D01, D02, D10 and the
// message bounds): every case is an error naming the limit, never a crash,
// a hang or an unbounded message.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/base/json_input.h"
#include "core/scenario/presets.h"
#include "core/scenario/scenario.h"
#include "core/scenario/scenario_fields.h"
#include "core/scenario/scenario_file.h"

namespace trainmem {
namespace {

namespace fs = std::filesystem;

class TempFolder {
public:
    TempFolder() {
        std::string pattern = (fs::temp_directory_path() / "trainmem-input-XXXXXX").string();
        path_ = ::mkdtemp(pattern.data());
    }
    ~TempFolder() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    fs::path file(const std::string& name, const std::string& text) const {
        std::ofstream(path_ / name, std::ios::binary) << text;
        return path_ / name;
    }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonInput, DeepNestingIsRefusedAtParseTime) {
    TempFolder folder;
    // 10^5 nested arrays overflowed the stack in the copy and the message.
    const auto file = folder.file("deep.json", nested(100000));
    auto doc = readJsonFile(file);
    ASSERT_FALSE(doc.ok());
    EXPECT_NE(doc.error().text().find("nested deeper than 32"), std::string::npos) << doc.error().text();
    EXPECT_NE(doc.error().text().find("deep.json"), std::string::npos);

    auto scenario = loadScenarioFile(file);
    ASSERT_FALSE(scenario.ok());
    EXPECT_LT(scenario.error().text().size(), 400u);
}

TEST(JsonInput, NestingUpToTheLimitIsAccepted) {
    EXPECT_TRUE(parseJsonText(nested(kMaxJsonDepth), "x").ok());
    EXPECT_FALSE(parseJsonText(nested(kMaxJsonDepth + 1), "x").ok());
    EXPECT_FALSE(parseJsonText("{\"a\":" + nested(kMaxJsonDepth) + "}", "x").ok());
}

TEST(JsonInput, DeeplyNestedSetValueIsRefused) {
    Scenario s = *loadPreset("gpt2");
    const Scenario before = s;
    auto r = applySetting(s, "model.foo", nested(65000));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().text().find("nested deeper"), std::string::npos) << r.error().text().substr(0, 300);
    EXPECT_LT(r.error().text().size(), 400u);
    EXPECT_EQ(s, before);
}

TEST(JsonInput, MessagesNeverCarryAnUnboundedValue) {
    const std::string huge(100000, 'x');
    EXPECT_LE(describeJson(nlohmann::json(huge)).size(), 40u);
    // Building the message must not walk the whole value either.
    nlohmann::json wide = nlohmann::json::array();
    for (int i = 0; i < 200000; ++i) wide.push_back(i);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 1000; ++i) EXPECT_LE(describeJson(wide).size(), 40u);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
    EXPECT_EQ(describeJson(nlohmann::json::parse(R"({"a":[1,2],"b":"c"})")), R"({"a":[1,2],"b":"c"})");

    Scenario s = *loadPreset("gpt2");
    auto r = applySetting(s, "training.micro_batch_size", huge);
    ASSERT_FALSE(r.ok());
    EXPECT_LT(r.error().text().size(), 200u) << r.error().text().substr(0, 300);
    r = applySetting(s, "training.optimizer", huge);
    ASSERT_FALSE(r.ok());
    EXPECT_LT(r.error().text().size(), 600u);
    r = applySetting(s, "model.n_layer", "[" + huge + "]");
    ASSERT_FALSE(r.ok());
    EXPECT_LT(r.error().text().size(), 400u);
}

TEST(JsonInput, ControlCharactersAreEscapedForTheTerminal) {
    EXPECT_EQ(printableText("a\nb\x1b[2Jc"), "a\\nb\\x1b[2Jc");
    EXPECT_EQ(printableText("\xc2\x9b" "31m"), "\\u009b31m");  // C1 CSI in UTF-8
    EXPECT_EQ(printableText("Grüße"), "Grüße");
    EXPECT_EQ(describeText(std::string(100, 'y'), 10), "yyyyyyy...");
}

TEST(JsonInput, DuplicateKeysAreRefusedNamingTheKeyAndBothLines) {
    const std::string text =
        "{\n"
        "  \"format\": \"trainmem-scenario\",\n"
        "  \"training\": {\n"
        "    \"micro_batch_size\": 4,\n"
        "    \"sequence_length\": 1024,\n"
        "    \"micro_batch_size\": 64\n"
        "  }\n"
        "}\n";
    auto doc = parseJsonText(text, "run.json");
    ASSERT_FALSE(doc.ok());
    const std::string message = doc.error().text();
    EXPECT_NE(message.find("run.json"), std::string::npos) << message;
    EXPECT_NE(message.find("training.micro_batch_size"), std::string::npos) << message;
    EXPECT_NE(message.find("lines 4 and 6"), std::string::npos) << message;
    // The same key in different objects is fine.
    EXPECT_TRUE(parseJsonText(R"({"a":{"x":1},"b":{"x":2}})", "x").ok());
    EXPECT_TRUE(parseJsonText(R"([{"x":1},{"x":2}])", "x").ok());
    auto in_array = parseJsonText("[{\"x\":1},\n{\"x\":1,\n\"x\":2}]", "x");
    ASSERT_FALSE(in_array.ok());
    EXPECT_NE(in_array.error().text().find("[1].x"), std::string::npos) << in_array.error().text();
    // Escapes are compared decoded: "\u0061" is "a".
    EXPECT_FALSE(parseJsonText(R"({"a":1,"\u0061":2})", "x").ok());
}

TEST(JsonInput, MalformedJsonSaysWhere) {
    auto doc = parseJsonText("{\n\"a\": 1,\n}", "f.json");
    ASSERT_FALSE(doc.ok());
    EXPECT_NE(doc.error().text().find("f.json: malformed JSON"), std::string::npos) << doc.error().text();
    EXPECT_NE(doc.error().text().find("line 3"), std::string::npos) << doc.error().text();
    EXPECT_FALSE(parseJsonText("1e999", "x").ok());
    EXPECT_FALSE(parseJsonText("", "x").ok());
}

TEST(InputFile, DevicesAndFifosAreRefusedWithoutBlocking) {
    TempFolder folder;
    const fs::path fifo = folder.path() / "pipe.json";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const fs::path link = folder.path() / "zero.json";
    fs::create_symlink("/dev/zero", link);
    const auto start = std::chrono::steady_clock::now();
    for (const fs::path& path : {fifo, fs::path("/dev/zero"), fs::path("/dev/urandom"), link}) {
        auto bytes = readInputFile(path, kMaxJsonFileBytes);
        ASSERT_FALSE(bytes.ok()) << path;
        EXPECT_NE(bytes.error().text().find("not a regular file"), std::string::npos) << bytes.error().text();
        EXPECT_FALSE(readJsonFile(path).ok());
    }
    EXPECT_NE(readInputFile(fifo, 100).error().text().find("FIFO"), std::string::npos);
    EXPECT_NE(readInputFile("/dev/zero", 100).error().text().find("character device"), std::string::npos);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(InputFile, EachKindOfFailureIsNamed) {
    TempFolder folder;
    auto missing = readInputFile(folder.path() / "nope.json", 100);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().text().find("no such file"), std::string::npos);

    auto dir = readInputFile(folder.path(), 100);
    ASSERT_FALSE(dir.ok());
    EXPECT_NE(dir.error().text().find("is a directory"), std::string::npos) << dir.error().text();

    fs::create_symlink(folder.path() / "b", folder.path() / "a");
    fs::create_symlink(folder.path() / "a", folder.path() / "b");
    auto loop = readInputFile(folder.path() / "a", 100);
    ASSERT_FALSE(loop.ok());
    EXPECT_NE(loop.error().text().find("symlink loop"), std::string::npos) << loop.error().text();

    fs::create_symlink(folder.path() / "gone", folder.path() / "dangling");
    auto dangling = readInputFile(folder.path() / "dangling", 100);
    ASSERT_FALSE(dangling.ok());
    EXPECT_NE(dangling.error().text().find("symbolic link to a file that does not exist"), std::string::npos);

    const auto locked = folder.file("locked.json", "{}");
    ::chmod(locked.c_str(), 0);
    if (::geteuid() != 0) {  // root reads anything
        auto denied = readInputFile(locked, 100);
        ASSERT_FALSE(denied.ok());
        EXPECT_NE(denied.error().text().find("permission denied"), std::string::npos) << denied.error().text();
    }
}

TEST(InputFile, SizeLimitIsNamed) {
    TempFolder folder;
    const auto big = folder.file("big.json", "");
    fs::resize_file(big, kMaxJsonFileBytes + 1);  // sparse: costs no disk
    auto doc = readJsonFile(big);
    ASSERT_FALSE(doc.ok());
    EXPECT_NE(doc.error().text().find("more than the limit of 16 MiB"), std::string::npos) << doc.error().text();

    const auto small = folder.file("small.json", "{\"a\": 1}");
    auto ok = readInputFile(small, 8);
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(*ok, "{\"a\": 1}");
    EXPECT_FALSE(readInputFile(small, 7).ok());
}

TEST(InputFile, HostileFilesInThePresetsFolderAreListedAsUnreadable) {
    TempFolder folder;
    fs::create_directories(folder.path() / "models");
    fs::create_directories(folder.path() / "scenarios");
    std::ofstream(folder.path() / "models" / "deep.json") << nested(100000);
    std::ofstream(folder.path() / "scenarios" / "twice.json")
        << "{\"format\": \"trainmem-scenario\",\n\"format\": \"trainmem-scenario\"}";
    ASSERT_EQ(::mkfifo((folder.path() / "models" / "pipe.json").c_str(), 0600), 0);
    setPresetsDirectory(folder.path());
    const auto start = std::chrono::steady_clock::now();
    const auto presets = listPresets();  // crashed on the deep file, hung on the FIFO
    auto deep = loadPreset("deep");
    auto twice = loadPreset("twice");
    setPresetsDirectory({});
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    ASSERT_FALSE(deep.ok());
    EXPECT_NE(deep.error().text().find("nested deeper"), std::string::npos) << deep.error().text();
    ASSERT_FALSE(twice.ok());
    EXPECT_NE(twice.error().text().find("duplicate key \"format\" (lines 1 and 2)"), std::string::npos)
        << twice.error().text();
    EXPECT_FALSE(loadPreset("pipe").ok());
}

}  // namespace
}  // namespace trainmem
