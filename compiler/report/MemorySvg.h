//===- MemorySvg.h - memory over the schedule, as a picture ------*- C++ -*-===//
//
// --report-svg FILE: two panels, the training step without recomputation and the plan memc
// chose, each the bytes live at every step stacked by category, on one scale, with the budget
// as a line. Plain SVG a browser opens; no scripts.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_REPORT_MEMORYSVG_H
#define MEMC_COMPILER_REPORT_MEMORYSVG_H

#include "compiler/report/MemoryReport.h"

namespace memc {

void writeMemorySvg(const MemoryReport &report, const std::string &title, llvm::raw_ostream &os);

} // namespace memc

#endif // MEMC_COMPILER_REPORT_MEMORYSVG_H
