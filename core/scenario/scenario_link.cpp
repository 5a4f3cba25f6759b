#include "core/scenario/scenario_link.h"

#include <array>

#include "core/base/json_input.h"

namespace trainmem {

namespace {

constexpr std::string_view kVersion = "1:";
constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// base64url (RFC 4648 §5) without padding: no character a URI must escape.
std::string encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const uint32_t v = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8) | uint8_t(bytes[i + 2]);
        for (int s : {18, 12, 6, 0}) out += kAlphabet[(v >> s) & 63];
    }
    if (i + 1 == bytes.size()) {
        const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
        for (int s : {18, 12}) out += kAlphabet[(v >> s) & 63];
    } else if (i + 2 == bytes.size()) {
        const uint32_t v = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8);
        for (int s : {18, 12, 6}) out += kAlphabet[(v >> s) & 63];
    }
    return out;
}

Expected<std::string> decode(std::string_view text) {
    std::array<int, 256> value{};
    value.fill(-1);
    for (size_t k = 0; k < kAlphabet.size(); ++k) value[uint8_t(kAlphabet[k])] = static_cast<int>(k);
    std::string out;
    uint32_t bits = 0;
    int count = 0;
    for (size_t k = 0; k < text.size(); ++k) {
        const char c = text[k];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '=') continue;  // a mail client's breaks, padding
        const int v = value[uint8_t(c)];
        if (v < 0)
            return Error{"link", "character " + std::to_string(k + 1) + " (" + describeText(std::string_view(&text[k], 1)) +
                                     ") is not one a trainmem link holds (A-Z a-z 0-9 - _)"};
        bits = (bits << 6) | static_cast<uint32_t>(v);
        if (++count == 4) {
            out += static_cast<char>((bits >> 16) & 255);
            out += static_cast<char>((bits >> 8) & 255);
            out += static_cast<char>(bits & 255);
            bits = 0;
            count = 0;
        }
    }
    if (count == 1) return Error{"link", "cut short: its last character is incomplete (was the whole link copied?)"};
    if (count == 2) out += static_cast<char>((bits >> 4) & 255);
    if (count == 3) {
        out += static_cast<char>((bits >> 10) & 255);
        out += static_cast<char>((bits >> 2) & 255);
    }
    return out;
}

// The JSON merge patch (RFC 7386) from `from` to `to`: what the pin changes.
nlohmann::json mergePatch(const nlohmann::json& from, const nlohmann::json& to) {
    if (!from.is_object() || !to.is_object()) return to;
    nlohmann::json patch = nlohmann::json::object();
    for (auto it = from.begin(); it != from.end(); ++it)
        if (!to.contains(it.key())) patch[it.key()] = nullptr;
    for (auto it = to.begin(); it != to.end(); ++it) {
        const auto there = from.find(it.key());
        if (there == from.end())
            patch[it.key()] = it.value();
        else if (*there != it.value())
            patch[it.key()] = mergePatch(*there, it.value());
    }
    return patch;
}

}  // namespace

bool isScenarioLink(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\t')) text.remove_prefix(1);
    return text.substr(0, kScenarioLinkPrefix.size()) == kScenarioLinkPrefix;
}

std::string scenarioLink(const nlohmann::json& document) {
    nlohmann::json compact = document;
    if (compact.is_object() && compact.contains("pins") && compact["pins"].is_array()) {
        nlohmann::json base = compact;
        base.erase("pins");
        for (nlohmann::json& pin : compact["pins"])
            if (pin.is_object() && pin.contains("scenario")) {
                pin["patch"] = mergePatch(base, pin["scenario"]);
                pin.erase("scenario");
            }
    }
    return std::string(kScenarioLinkPrefix) + std::string(kVersion) + encode(compact.dump());
}

Expected<nlohmann::json> readScenarioLink(std::string_view link) {
    while (!link.empty() && (link.front() == ' ' || link.front() == '\n' || link.front() == '\t')) link.remove_prefix(1);
    while (!link.empty() && (link.back() == ' ' || link.back() == '\n' || link.back() == '\r' || link.back() == '\t'))
        link.remove_suffix(1);
    if (!isScenarioLink(link)) return Error{"link", "not a trainmem link: it must start with \"trainmem:\""};
    link.remove_prefix(kScenarioLinkPrefix.size());
    if (link.substr(0, 2) == "//") link.remove_prefix(2);  // "trainmem://1:…", as some programs rewrite it
    if (link.substr(0, kVersion.size()) != kVersion)
        return Error{"link", "version \"" + describeText(link.substr(0, link.find(':')), 8) +
                                 "\" is not one this trainmem reads (1); was it made by a newer trainmem?"};
    link.remove_prefix(kVersion.size());
    // A scenario file's limit: a link is no way around it.
    if (static_cast<int64_t>(link.size()) > kMaxJsonFileBytes / 3 * 4)
        return Error{"link", "longer than " + std::to_string(kMaxJsonFileBytes >> 20) + " MiB of scenario"};
    if (link.empty()) return Error{"link", "empty: nothing follows \"trainmem:1:\""};
    Expected<std::string> text = decode(link);
    if (!text) return text.error();
    Expected<nlohmann::json> document = parseJsonText(*text, "link");
    if (!document) return Error{"link", document.error().text() + " (the link is damaged or cut short)"};
    if (!document->is_object()) return Error{"link", "does not hold a scenario (its content is not a JSON object)"};
    if (document->contains("pins") && (*document)["pins"].is_array()) {
        nlohmann::json base = *document;
        base.erase("pins");
        for (nlohmann::json& pin : (*document)["pins"])
            if (pin.is_object() && pin.contains("patch")) {
                nlohmann::json scenario = base;
                scenario.merge_patch(pin["patch"]);
                pin["scenario"] = std::move(scenario);
                pin.erase("patch");
            }
    }
    return document;
}

}  // namespace trainmem
