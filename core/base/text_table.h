#pragma once
// Plain-text and Markdown tables for reports (CLI output, clipboard).
#include <string>
#include <vector>

namespace trainmem {

enum class Align { Left, Right };

struct TextTable {
    std::vector<std::string> header;
    std::vector<Align> align;                    // per column; missing columns align left
    std::vector<std::vector<std::string>> rows;  // an empty row draws a separator line
};

// Columns padded to their widest cell, two spaces apart, no trailing blanks.
std::string renderPlain(const TextTable& table);
// GitHub-flavoured Markdown (| a | b |), with | in cells escaped.
std::string renderMarkdown(const TextTable& table);
// RFC 4180: cells with a comma, quote or newline are quoted, quotes doubled.
std::string csvCell(const std::string& cell);

}  // namespace trainmem
