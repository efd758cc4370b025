//===- LadderReport.cpp - the memory ladder as a table, JSON and SVG -------===//
#include "compiler/report/LadderReport.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

namespace memc {
namespace {

/// The categories some row holds bytes of, in the report's order.
std::vector<size_t> usedCategories(const std::vector<const LadderRow *> &rows) {
  std::vector<size_t> used;
  for (size_t c = 1; c < plan::kCategories.size(); ++c)
    if (llvm::any_of(
            rows, [&](const LadderRow *row) { return row->memory && row->memory->breakdown[c]; }))
      used.push_back(c);
  return used;
}

void printRows(const std::vector<std::string> &labels, const std::vector<const LadderRow *> &rows,
               llvm::raw_ostream &os) {
  std::vector<size_t> categories = usedCategories(rows);
  size_t labelWidth = 4;
  for (const std::string &label : labels)
    labelWidth = std::max(labelWidth, label.size());
  auto column = [](size_t c) {
    return std::max<size_t>(11, std::strlen(plan::categoryInfo(c).name)) + 1;
  };
  bool maxSequence = llvm::any_of(rows, [](const LadderRow *row) { return row->maxSequence; });
  os << "  " << llvm::left_justify("", labelWidth) << llvm::right_justify("peak", 12)
     << llvm::right_justify("fits", 6) << llvm::right_justify("recompute", 11);
  if (maxSequence)
    os << llvm::right_justify("max seq", 10);
  for (size_t c : categories)
    os << llvm::right_justify(plan::categoryInfo(c).name, column(c));
  os << "\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const LadderRow &row = *rows[i];
    os << "  " << llvm::left_justify(labels[i], labelWidth);
    if (!row.memory) {
      os << "  error: " << row.error << "\n";
      continue;
    }
    const MemoryReport &memory = *row.memory;
    os << llvm::right_justify(formatBytes(memory.peakBytes), 12)
       << llvm::right_justify(!memory.budgetBytes ? "-"
                              : row.fits()        ? "yes"
                                                  : "no",
                              6)
       << llvm::right_justify(llvm::formatv("{0:f1}%", memory.recomputeFlopsPercent()).str(), 11);
    if (maxSequence)
      os << llvm::right_justify(row.maxSequence ? std::to_string(*row.maxSequence) : "-", 10);
    for (size_t c : categories)
      os << llvm::right_justify(formatBytes(memory.breakdown[c]), column(c));
    os << "\n";
  }
}

llvm::json::Object rowJson(const LadderRow &row) {
  llvm::json::Array flags;
  for (const std::string &flag : row.flags)
    flags.push_back(flag);
  llvm::json::Object object{{"name", row.name}, {"flags", std::move(flags)}};
  if (!row.memory) {
    object["error"] = row.error;
    object["fits"] = false;
    return object;
  }
  const MemoryReport &memory = *row.memory;
  object["peak_bytes"] = static_cast<int64_t>(memory.peakBytes);
  object["fits"] = row.fits();
  object["breakdown"] = peakBreakdownJson(memory);
  object["host_breakdown"] = hostBreakdownJson(memory);
  object["most_live_bytes"] = mostLiveJson(memory);
  object["model_state_bytes"] = static_cast<int64_t>(memory.modelState.total());
  object["recompute_flops_pct"] = memory.recomputeFlopsPercent();
  if (row.maxSequence) {
    object["max_seq"] = *row.maxSequence;
    object["max_seq_step"] = row.maxSequenceStep;
    if (!row.maxSequenceLimit.empty())
      object["max_seq_refused"] = row.maxSequenceLimit;
    object["max_seq_peak_bytes"] = static_cast<int64_t>(row.maxSequencePeakBytes);
  }
  object["remat_strategy"] = memory.strategy;
  return object;
}

/// Text as SVG character data.
std::string escaped(llvm::StringRef text) {
  std::string out;
  for (char c : text)
    out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
  return out;
}

/// `argument` as a shell reads it back: quoted where it holds more than safe characters.
std::string shellQuoted(llvm::StringRef argument) {
  bool safe = !argument.empty() && llvm::all_of(argument, [](char c) {
    return llvm::isAlnum(c) || llvm::StringRef("-_./=,:+@%").contains(c);
  });
  if (safe)
    return argument.str();
  std::string quoted = "'";
  for (char c : argument)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

} // namespace

void printMemoryLadder(const MemoryLadder &ladder, llvm::raw_ostream &os) {
  os << "memc memory ladder: " << ladder.model;
  if (ladder.budgetBytes)
    os << ", budget " << formatBytes(*ladder.budgetBytes);
  if (ladder.worldSize > 1)
    os << ", per rank of " << ladder.worldSize;
  os << "\n";
  std::vector<std::string> labels;
  std::vector<const LadderRow *> rows;
  for (size_t i = 0; i < ladder.rows.size(); ++i) {
    labels.push_back(std::to_string(i + 1) + ". " + ladder.rows[i].name);
    rows.push_back(&ladder.rows[i]);
  }
  if (!rows.empty())
    printRows(labels, rows, os);
  for (size_t i = 0; i < ladder.rows.size(); ++i)
    if (!ladder.rows[i].maxSequenceLimit.empty())
      os << "  " << i + 1 << ". --max-seq stopped " << ladder.rows[i].maxSequenceLimit
         << "\n";
  for (size_t i = 0; i < ladder.rows.size(); ++i) {
    os << "  " << i + 1 << ". memc " << shellQuoted(ladder.model);
    for (const std::string &flag : ladder.rows[i].flags)
      os << " " << shellQuoted(flag);
    os << "\n";
  }
  if (ladder.batchSweep.empty())
    return;
  os << "memory by micro-batch, with the flags given\n";
  labels.clear();
  rows.clear();
  for (const auto &[batch, row] : ladder.batchSweep) {
    labels.push_back("micro-batch " + std::to_string(batch));
    rows.push_back(&row);
  }
  printRows(labels, rows, os);
}

void writeMemoryLadderJson(const MemoryLadder &ladder, llvm::raw_ostream &os) {
  llvm::json::Array rows, sweep;
  for (const LadderRow &row : ladder.rows)
    rows.push_back(rowJson(row));
  for (const auto &[batch, row] : ladder.batchSweep) {
    llvm::json::Object object = rowJson(row);
    object["micro_batch"] = batch;
    sweep.push_back(std::move(object));
  }
  llvm::json::Object root{
      {"model", ladder.model},
      {"budget_bytes", ladder.budgetBytes
                           ? llvm::json::Value(static_cast<int64_t>(*ladder.budgetBytes))
                           : llvm::json::Value(nullptr)},
      {"world_size", ladder.worldSize},
      {"ladder", std::move(rows)},
      {"batch_sweep", std::move(sweep)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}

void writeMemoryLadderSvg(const MemoryLadder &ladder, llvm::raw_ostream &os) {
  constexpr double kBar = 46, kGap = 14, kLeft = 90, kTop = 50, kHeight = 320, kLegend = 190;
  constexpr double kLabels = 150; // rotated rung names below the bars
  const std::vector<LadderRow> &rows = ladder.rows;
  double scale = ladder.budgetBytes.value_or(0);
  for (const LadderRow &row : rows)
    if (row.memory)
      scale = std::max(scale, double(row.memory->peakBytes));
  scale = std::max(scale * 1.08, 1.0);
  double width = kLeft + rows.size() * (kBar + kGap) + kGap + kLegend;
  double height = kTop + kHeight + kLabels;
  auto y = [&](double bytes) { return kTop + kHeight * (1.0 - bytes / scale); };
  os << llvm::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                     "font-family=\"sans-serif\">\n",
                     width, height);
  os << llvm::format("<text x=\"%.0f\" y=\"24\" font-size=\"15\">", kLeft)
     << escaped("memory ladder: " + ladder.model) << "</text>\n";
  for (int q = 0; q <= 4; ++q) {
    double bytes = scale * q / 4;
    os << llvm::format("<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                       kLeft, y(bytes), width - kLegend, y(bytes));
    os << llvm::format("<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">",
                       kLeft - 6, y(bytes) + 4)
       << formatBytes(static_cast<uint64_t>(bytes)) << "</text>\n";
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    double x = kLeft + kGap + i * (kBar + kGap);
    if (const std::optional<MemoryReport> &memory = rows[i].memory) {
      double below = 0;
      for (size_t c = 1; c < plan::kCategories.size(); ++c) {
        double bytes = memory->breakdown[c];
        if (c == plan::CATEGORY_UNSPECIFIED || bytes <= 0)
          continue;
        os << llvm::format("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" "
                           "fill=\"%s\"><title>",
                           x, y(below + bytes), kBar, y(below) - y(below + bytes),
                           plan::categoryInfo(c).svgColor)
           << plan::categoryInfo(c).name << " " << formatBytes(memory->breakdown[c])
           << "</title></rect>\n";
        below += bytes;
      }
      os << llvm::format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">",
                         x + kBar / 2, y(memory->peakBytes) - 4)
         << formatBytes(memory->peakBytes) << "</text>\n";
    }
    os << llvm::format("<text font-size=\"11\" text-anchor=\"end\" "
                       "transform=\"translate(%.1f,%.0f) rotate(-40)\">",
                       x + kBar / 2, kTop + kHeight + 14)
       << escaped(rows[i].name) << "</text>\n";
  }
  if (ladder.budgetBytes) {
    double at = y(double(*ladder.budgetBytes));
    os << llvm::format("<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#c00\" "
                       "stroke-dasharray=\"6,4\" stroke-width=\"2\"/>\n",
                       kLeft, at, width - kLegend, at);
    os << llvm::format("<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" fill=\"#c00\">",
                       width - kLegend + 6, at + 4)
       << "budget " << formatBytes(*ladder.budgetBytes) << "</text>\n";
  }
  double legendY = kTop + 30;
  for (size_t c = 1; c < plan::kCategories.size(); ++c) {
    if (llvm::none_of(rows,
                      [&](const LadderRow &row) { return row.memory && row.memory->breakdown[c]; }))
      continue;
    os << llvm::format("<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n",
                       width - kLegend + 10, legendY, plan::categoryInfo(c).svgColor);
    os << llvm::format("<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">", width - kLegend + 28,
                       legendY + 10)
       << plan::categoryInfo(c).name << "</text>\n";
    legendY += 18;
  }
  os << "</svg>\n";
}

} // namespace memc
