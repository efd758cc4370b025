//===- MessageText.h - messages a person can read ---------------*- C++ -*-===//
//
// Messages quote names from the user's files, and a hostile file's name can be 50 MB: echoed
// whole, one error filled the terminal and the log. Every message memc and its programs print
// passes through here: a run of text without spaces longer than kMaxQuotedRun keeps its start
// and end around a count of what was left out.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_SUPPORT_MESSAGETEXT_H
#define MEMC_RUNTIME_SUPPORT_MESSAGETEXT_H

#include <cstddef>
#include <string>
#include <string_view>

namespace memc::runtime {

/// The longest run of text without spaces a message keeps whole (a path, a name).
constexpr size_t kMaxQuotedRun = 512;

/// `text` with each run longer than kMaxQuotedRun cut to its first and last 200 bytes around
/// "[... N bytes ...]".
std::string shortenLongRuns(std::string_view text);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_SUPPORT_MESSAGETEXT_H
