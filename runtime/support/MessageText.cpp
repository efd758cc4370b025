//===- MessageText.cpp - messages a person can read -----------------------===//
#include "runtime/support/MessageText.h"

namespace memc::runtime {

std::string shortenLongRuns(std::string_view text) {
  constexpr size_t kKept = 200;
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find_first_of(" \n", start);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view run = text.substr(start, end - start);
    if (run.size() > kMaxQuotedRun)
      out.append(run.substr(0, kKept))
          .append("[... " + std::to_string(run.size() - 2 * kKept) + " bytes ...]")
          .append(run.substr(run.size() - kKept));
    else
      out.append(run);
    if (end < text.size())
      out.push_back(text[end]);
    start = end + 1;
  }
  return out;
}

} // namespace memc::runtime
