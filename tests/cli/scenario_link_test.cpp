// trainmem: links (core/scenario/scenario_link.h): a scenario and its pins in one
// line that the CLI reads as --scenario; damaged links refused by name.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/scenario/presets.h"
#include "core/scenario/scenario_fields.h"
#include "core/scenario/scenario_link.h"
#include "tests/cli/cli_run.h"

namespace trainmem::cli {
namespace {

using nlohmann::json;

json documentOf(const Scenario& s) { return json::parse(scenarioToOrderedJson(s).dump()); }

Scenario preset(const std::string& name) {
    Expected<Scenario> s = loadPreset(name);
    EXPECT_TRUE(s.ok());
    return s.ok() ? *s : Scenario{};
}

TEST(ScenarioLink, HoldsTheScenarioAndItsPinsExactly) {
    const Scenario a = preset("llama3.1-8b-fsdp-8xh100");
    json doc = documentOf(a);
    json pins = json::array();
    for (int k = 0; k < 6; ++k) {
        Scenario p = a;
        p.training.micro_batch_size = k + 1;
        if (k == 3) p = preset("mixtral-8x7b-tp-ep");  // another model entirely
        pins.push_back({{"name", std::string(1, char('A' + k))}, {"scenario", documentOf(p)}});
    }
    doc["pins"] = pins;
    const std::string link = scenarioLink(doc);
    ASSERT_EQ(link.rfind("trainmem:1:", 0), 0u);
    for (char c : link.substr(11)) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') << c;
    Expected<json> back = readScenarioLink(link);
    ASSERT_TRUE(back.ok()) << back.error().text();
    EXPECT_EQ(*back, doc);
    // Compact: five pins that differ in one setting cost far less than five
    // scenarios (each pin is its difference from the link's scenario).
    const size_t alone = scenarioLink(documentOf(a)).size();
    json five = documentOf(a);
    five["pins"] = json::array();
    for (int k = 0; k < 5; ++k) {
        Scenario p = a;
        p.training.micro_batch_size = k + 2;
        five["pins"].push_back({{"name", std::string(1, char('A' + k))}, {"scenario", documentOf(p)}});
    }
    EXPECT_LT(scenarioLink(five).size(), alone + 5 * 120) << alone;
}

TEST(ScenarioLink, TheCliEstimatesALinkAsTheScenarioItHolds) {
    const Scenario a = preset("llama3.1-8b-fsdp-8xh100");
    const std::string link = scenarioLink(documentOf(a));
    const CliRun from_link = run({"estimate", "--scenario", link, "--format", "json"});
    ASSERT_EQ(from_link.status, 0) << from_link.err;
    const CliRun from_preset = run({"estimate", "--preset", "llama3.1-8b-fsdp-8xh100", "--format", "json"});
    ASSERT_EQ(from_preset.status, 0) << from_preset.err;
    EXPECT_EQ(json::parse(from_link.out)["peak"], json::parse(from_preset.out)["peak"]);
}

TEST(ScenarioLink, ADamagedLinkIsRefusedSayingWhatIsWrong) {
    const std::string good = scenarioLink(documentOf(preset("llama3.1-8b-fsdp-8xh100")));
    struct Case {
        std::string link, words;
    };
    for (const Case& c : {Case{"trainmem:2:abc", "version"}, Case{"trainmem:1:", "empty"},
                          Case{good.substr(0, good.size() / 2), "damaged or cut short"},
                          Case{good.substr(0, 40) + "%" + good.substr(41), "character 30"},
                          Case{"trainmem:1:" + std::string("e30"), ""}}) {
        SCOPED_TRACE(c.link.substr(0, 60));
        const CliRun r = run({"estimate", "--scenario", c.link});
        EXPECT_EQ(r.status, 2);
        EXPECT_TRUE(r.out.empty());
        EXPECT_NE(r.err.find("link"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(c.words), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
    EXPECT_FALSE(readScenarioLink("https://example.com").ok());
}

}  // namespace
}  // namespace trainmem::cli
