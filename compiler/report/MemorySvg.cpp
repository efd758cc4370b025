//===- MemorySvg.cpp - memory over the schedule, as a picture -------------===//
#include "compiler/report/MemorySvg.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace memc {
namespace {

constexpr double kWidth = 960, kPanelHeight = 300, kLeft = 80, kRight = 180, kTop = 50, kGap = 60;
/// More steps than this are shown as the step with the most bytes in each of this many buckets.
constexpr size_t kMaxColumns = 1200;

/// Text as SVG character data (a model's file name may hold & or <).
std::string escaped(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

std::vector<CategoryBytes> columns(const MemoryTimeline &timeline) {
  const std::vector<CategoryBytes> &steps = timeline.steps;
  if (steps.size() <= kMaxColumns)
    return steps;
  std::vector<CategoryBytes> result;
  for (size_t c = 0; c < kMaxColumns; ++c) {
    size_t begin = c * steps.size() / kMaxColumns, end = (c + 1) * steps.size() / kMaxColumns;
    size_t best = begin;
    for (size_t s = begin; s < end; ++s)
      if (totalBytes(steps[s]) > totalBytes(steps[best]))
        best = s;
    result.push_back(steps[best]);
  }
  return result;
}

void panel(llvm::raw_ostream &os, const MemoryTimeline &timeline, double top, double scaleBytes,
           const std::string &caption, std::optional<uint64_t> budget) {
  std::vector<CategoryBytes> data = columns(timeline);
  double plotWidth = kWidth - kLeft - kRight;
  auto x = [&](size_t i) { return kLeft + plotWidth * i / std::max<size_t>(1, data.size()); };
  auto y = [&](double bytes) { return top + kPanelHeight * (1.0 - bytes / scaleBytes); };
  os << llvm::format("<text x=\"%.0f\" y=\"%.0f\" font-size=\"14\">", kLeft, top - 8) << caption
     << "</text>\n";
  // One band per category: from the stack below it to the stack including it.
  std::vector<double> below(data.size(), 0.0);
  for (size_t c = 1; c < plan::kCategories.size(); ++c) {
    bool any = llvm::any_of(data, [&](const CategoryBytes &row) { return row[c] > 0; });
    if (!any)
      continue;
    os << "<polygon fill=\"" << plan::categoryInfo(c).svgColor << "\" points=\"";
    for (size_t i = 0; i < data.size(); ++i) {
      double upper = below[i] + data[i][c];
      os << llvm::format("%.1f,%.1f %.1f,%.1f ", x(i), y(upper), x(i + 1), y(upper));
    }
    for (size_t i = data.size(); i-- > 0;)
      os << llvm::format("%.1f,%.1f %.1f,%.1f ", x(i + 1), y(below[i]), x(i), y(below[i]));
    os << "\"><title>" << plan::categoryInfo(c).name << "</title></polygon>\n";
    for (size_t i = 0; i < data.size(); ++i)
      below[i] += data[i][c];
  }
  // Axes and gridlines at quarters of the scale.
  for (int q = 0; q <= 4; ++q) {
    double bytes = scaleBytes * q / 4;
    os << llvm::format("<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                       kLeft, y(bytes), kLeft + plotWidth, y(bytes));
    os << llvm::format("<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">",
                       kLeft - 6, y(bytes) + 4)
       << formatBytes(static_cast<uint64_t>(bytes)) << "</text>\n";
  }
  if (budget)
    os << llvm::format("<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#d00\" "
                       "stroke-width=\"2\" stroke-dasharray=\"6,4\"/>\n",
                       kLeft, y(*budget), kLeft + plotWidth, y(*budget))
       // Inside the plot, above the line's left end: right of the plot is the legend's.
       << llvm::format("<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" fill=\"#d00\">budget ",
                       kLeft + 4, y(*budget) - 4)
       << formatBytes(*budget) << "</text>\n";
  os << llvm::format("<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">"
                     "schedule step (%zu steps)</text>\n",
                     kLeft + plotWidth / 2, top + kPanelHeight + 16, timeline.steps.size());
}

} // namespace

void writeMemorySvg(const MemoryReport &report, const std::string &title, llvm::raw_ostream &os) {
  double scale = 1;
  for (const MemoryTimeline *timeline : {&report.before, &report.after})
    for (const CategoryBytes &row : timeline->steps)
      scale = std::max(scale, static_cast<double>(totalBytes(row)));
  if (report.budgetBytes)
    scale = std::max(scale, static_cast<double>(*report.budgetBytes));
  scale *= 1.05;
  double height = kTop + 2 * kPanelHeight + kGap + 40;
  os << llvm::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                     "font-family=\"sans-serif\">\n",
                     kWidth, height);
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << llvm::format("<text x=\"%.0f\" y=\"22\" font-size=\"16\" font-weight=\"bold\">", kLeft)
     << escaped(title) << "</text>\n";
  panel(os, report.before, kTop, scale,
        "without recomputation: peak " + formatBytes(report.baselinePeakBytes), report.budgetBytes);
  std::string caption =
      "memc's plan (" + report.strategy + "): peak " + formatBytes(report.peakBytes);
  if (report.clones)
    caption +=
        llvm::formatv(", recomputing {0:F1}% of the step's FLOPs", report.recomputeFlopsPercent())
            .str();
  panel(os, report.after, kTop + kPanelHeight + kGap, scale, caption, report.budgetBytes);
  // Legend.
  double legendX = kWidth - kRight + 70, legendY = kTop + 10;
  for (size_t c = 1; c < plan::kCategories.size(); ++c, legendY += 18)
    os << llvm::format("<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                       "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">%s</text>\n",
                       legendX, legendY, plan::categoryInfo(c).svgColor, legendX + 16, legendY + 10,
                       plan::categoryInfo(c).name);
  os << "</svg>\n";
}

} // namespace memc
