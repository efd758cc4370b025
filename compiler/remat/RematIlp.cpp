//===- RematIlp.cpp - optimal rematerialization as a mixed-integer program ===//
//
// Notation. Steps s = 0..N-1 are the graph's nodes in order. A candidate n is a recomputable
// forward node from which a backward reader is reachable through recomputable forward
// consumers (only those decisions change anything). d(n) is the first backward step reading
// an output of n. Demand points D_0 < D_1 < ... are the distinct finite d(n): every clone runs
// in the group inserted just before some D_j. Interval j holds the steps [D_j, D_{j+1});
// interval -1 the steps before D_0 (the forward and the start of the backward).
//
// Variables (all in [0,1]; only r is integer, the rest are forced to 0/1 by r):
//   r_n      n is recomputed.
//   C_{n,j}  n's clone has run by step D_j, i.e. c(n) <= D_j, where the clone rule places it at
//            c(n) = min(d(n), min over recomputed candidate consumers m of c(m)). Exactly:
//              C_{n,j} = 0                                   if D_j < earliest(n)
//              C_{n,j} = r_n                                 if D_j >= d(n)
//              C_{n,j} = r_n AND OR_m C_{m,j}                otherwise, linearised as
//                C <= r_n,  C <= sum_m C_{m,j},  C >= C_{m,j} + r_n - 1.
//            C_n = C_{n,last} says whether n is cloned at all.
//   P_{m,j} = C_m - C_{m,j}: m's clone runs after interval j starts (a linear expression).
//   Y_{v,j}  original value v is held in interval j for a later clone:
//              Y >= P_{m,j} - r_p for each candidate consumer m of v (p = producer of v).
//   Z_{v,j}  the clone of v is held in interval j for a later clone:
//              Z >= C_{p,j} + P_{m,j} - 1.
// Y and Z are only bounded below; a memory row holds with the exact values whenever it holds
// at all, so the model is exact in them.
//
// Liveness at an original step s of interval j (f = the last fixed reader: forward readers,
// plus backward ones when p is not a candidate; b = the last backward reader):
//   original v: 1 for s <= f; (1 - r_p) for f < s <= b; Y_{v,j} after.
//   clone of v: C_{p,j} for s <= b; Z_{v,j} after.
// Constraints:
//   every step s:   fixed(s) + sum_v bytes_v live_v(s) <= limit - fixedBytes        (exact)
//   every D_j:      after(D_j - 1) + sum_n outBytes_n (C_{n,j} - C_{n,j-1}) <= ...  (conservative)
// where after(s) counts the values live at s that live past it (same terms with strict <):
// at any clone of the group, what is live was either live across the step before or is one
// of the group's clones. Objective: min sum_n cost_n r_n.
//
//===----------------------------------------------------------------------===//
#include "compiler/remat/RematIlp.h"

#include <CbcEventHandler.hpp>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>

namespace memc::remat {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// sum coefficient * column + constant.
struct LinExpr {
  std::vector<std::pair<int32_t, double>> terms;
  double constant = 0;

  static LinExpr column(int32_t col) { return {{{col, 1.0}}, 0}; }
  LinExpr &add(const LinExpr &other, double scale = 1) {
    for (auto [col, coef] : other.terms)
      terms.push_back({col, coef * scale});
    constant += other.constant * scale;
    return *this;
  }
  /// Merges repeated columns and drops zero coefficients.
  LinExpr &normalize() {
    std::sort(terms.begin(), terms.end());
    std::vector<std::pair<int32_t, double>> merged;
    for (auto [col, coef] : terms) {
      if (!merged.empty() && merged.back().first == col)
        merged.back().second += coef;
      else
        merged.push_back({col, coef});
    }
    merged.erase(std::remove_if(merged.begin(), merged.end(),
                                [](auto term) { return std::abs(term.second) < 1e-12; }),
                 merged.end());
    terms = std::move(merged);
    return *this;
  }
  bool isZero() const { return terms.empty() && constant == 0; }
};

/// What the model needs to know about the graph, computed once.
struct RematProblem {
  explicit RematProblem(const RematGraph &graph);
  int32_t interval(int32_t step) const {
    return static_cast<int32_t>(std::upper_bound(demands.begin(), demands.end(), step) -
                                demands.begin()) -
           1;
  }

  static constexpr int32_t kNever = std::numeric_limits<int32_t>::max();
  const RematGraph &graph;
  int32_t steps;
  std::vector<int32_t> candidates; // in node order
  std::vector<int32_t> candidateIndex;
  std::vector<int32_t> lastForwardReader, lastBackwardReader, firstBackwardReader;
  /// Candidates reading each value, each once.
  std::vector<std::vector<int32_t>> candidateReaders;
  /// Per candidate index: d(n) and the earliest its clone can run.
  std::vector<int32_t> firstDemand, earliest;
  std::vector<int32_t> demands;
};

RematProblem::RematProblem(const RematGraph &graph) : graph(graph), steps(graph.numNodes()) {
  int32_t values = graph.numValues();
  lastForwardReader.assign(values, -1);
  lastBackwardReader.assign(values, -1);
  firstBackwardReader.assign(values, kNever);
  for (int32_t s = 0; s < steps; ++s) {
    for (int32_t v : graph.nodes[s].inputs) {
      if (graph.nodes[s].forward) {
        lastForwardReader[v] = s;
      } else {
        lastBackwardReader[v] = s;
        firstBackwardReader[v] = std::min(firstBackwardReader[v], s);
      }
    }
  }
  // A node is a candidate if a backward step reads it or a candidate consumer does; consumers
  // come later, so one reverse pass decides.
  std::vector<char> isCandidate(steps, 0);
  std::vector<std::vector<int32_t>> forwardReaders(values);
  for (int32_t s = 0; s < steps; ++s)
    if (graph.nodes[s].forward)
      for (int32_t v : graph.nodes[s].inputs)
        if (forwardReaders[v].empty() || forwardReaders[v].back() != s)
          forwardReaders[v].push_back(s);
  for (int32_t n = steps - 1; n >= 0; --n) {
    const RematGraph::Node &node = graph.nodes[n];
    if (!node.forward || !node.recomputable)
      continue;
    for (int32_t v : node.outputs) {
      isCandidate[n] |= lastBackwardReader[v] >= 0;
      for (int32_t m : forwardReaders[v])
        isCandidate[n] |= isCandidate[m];
    }
  }
  candidateIndex.assign(steps, -1);
  candidateReaders.resize(values);
  for (int32_t n = 0; n < steps; ++n) {
    if (!isCandidate[n])
      continue;
    candidateIndex[n] = static_cast<int32_t>(candidates.size());
    candidates.push_back(n);
  }
  for (int32_t v = 0; v < values; ++v)
    for (int32_t m : forwardReaders[v])
      if (isCandidate[m])
        candidateReaders[v].push_back(m);
  int32_t count = static_cast<int32_t>(candidates.size());
  firstDemand.assign(count, kNever);
  earliest.assign(count, kNever);
  for (int32_t k = count - 1; k >= 0; --k) {
    for (int32_t v : graph.nodes[candidates[k]].outputs) {
      firstDemand[k] = std::min(firstDemand[k], firstBackwardReader[v]);
      for (int32_t m : candidateReaders[v])
        earliest[k] = std::min(earliest[k], earliest[candidateIndex[m]]);
    }
    earliest[k] = std::min(earliest[k], firstDemand[k]);
    if (firstDemand[k] != kNever)
      demands.push_back(firstDemand[k]);
  }
  std::sort(demands.begin(), demands.end());
  demands.erase(std::unique(demands.begin(), demands.end()), demands.end());
}

/// Columns and rows of the program, in the graph's units; loaded into CBC per round.
struct MipModel {
  std::vector<double> objective;
  std::vector<char> integer;
  /// Structural rows lower <= terms: fixed for all rounds.
  std::vector<LinExpr> structural;
  std::vector<double> structuralLower, structuralUpper;
  /// Memory rows terms + constant <= capacity, in bytes; capacity changes per round.
  std::vector<LinExpr> memory;

  int32_t addColumn(double cost, bool isInteger) {
    objective.push_back(cost);
    integer.push_back(isInteger);
    return static_cast<int32_t>(objective.size()) - 1;
  }
  void addRow(LinExpr expr, double lower, double upper) {
    expr.normalize();
    double shift = expr.constant;
    expr.constant = 0;
    structural.push_back(std::move(expr));
    structuralLower.push_back(lower - shift);
    structuralUpper.push_back(upper - shift);
  }
};

/// Builds the program of the file comment.
class RematIlpBuilder {
public:
  RematIlpBuilder(const RematProblem &problem, Clock::time_point deadline)
      : problem(problem), graph(problem.graph), deadline(deadline) {}

  /// False when the deadline passes first.
  bool build(MipModel &model);
  std::vector<int32_t> rColumns;

private:
  static constexpr int32_t kZero = -1, kRecomputed = -2;
  LinExpr r(int32_t candidate) const { return LinExpr::column(rColumns[candidate]); }
  LinExpr cloned(int32_t candidate, int32_t j) const;
  LinExpr cloneLater(int32_t candidate, int32_t j) const {
    LinExpr later = cloned(candidate, static_cast<int32_t>(problem.demands.size()) - 1);
    return later.add(cloned(candidate, j), -1).normalize();
  }
  LinExpr keep(int32_t value) const;
  LinExpr heldOriginal(int32_t value, int32_t j);
  LinExpr heldClone(int32_t value, int32_t j);
  void buildCloneColumns();
  void buildMemoryRows();
  void addValueTerms(std::vector<LinExpr> &live, std::vector<LinExpr> &after, int32_t value);

  const RematProblem &problem;
  const RematGraph &graph;
  Clock::time_point deadline;
  MipModel *model = nullptr;
  /// cloneColumn[k][j]: kZero, kRecomputed (C = r) or the column of C_{k,j}.
  std::vector<std::vector<int32_t>> cloneColumn;
  std::map<std::pair<int32_t, int32_t>, LinExpr> heldOriginalMemo, heldCloneMemo;
};

LinExpr RematIlpBuilder::cloned(int32_t candidate, int32_t j) const {
  if (j < 0)
    return {};
  int32_t col = cloneColumn[candidate][j];
  if (col == kZero)
    return {};
  return col == kRecomputed ? r(candidate) : LinExpr::column(col);
}

LinExpr RematIlpBuilder::keep(int32_t value) const {
  int32_t producer = graph.producer[value];
  int32_t candidate = producer < 0 ? -1 : problem.candidateIndex[producer];
  LinExpr one{{}, 1};
  return candidate < 0 ? one : one.add(r(candidate), -1);
}

void RematIlpBuilder::buildCloneColumns() {
  int32_t count = static_cast<int32_t>(problem.candidates.size());
  int32_t demandCount = static_cast<int32_t>(problem.demands.size());
  cloneColumn.assign(count, std::vector<int32_t>(demandCount, kZero));
  for (int32_t k = count - 1; k >= 0; --k) {
    std::vector<int32_t> consumers;
    for (int32_t v : graph.nodes[problem.candidates[k]].outputs)
      for (int32_t m : problem.candidateReaders[v])
        consumers.push_back(problem.candidateIndex[m]);
    for (int32_t j = 0; j < demandCount; ++j) {
      int32_t point = problem.demands[j];
      if (point < problem.earliest[k])
        continue;
      if (point >= problem.firstDemand[k]) {
        cloneColumn[k][j] = kRecomputed;
        continue;
      }
      int32_t col = model->addColumn(0, false);
      cloneColumn[k][j] = col;
      LinExpr c = LinExpr::column(col);
      model->addRow(LinExpr(c).add(r(k), -1), -COIN_DBL_MAX, 0);
      LinExpr anyConsumer = c;
      for (int32_t m : consumers) {
        LinExpr consumerCloned = cloned(m, j);
        if (consumerCloned.isZero())
          continue;
        anyConsumer.add(consumerCloned, -1);
        model->addRow(LinExpr(c).add(consumerCloned, -1).add(r(k), -1), -1, COIN_DBL_MAX);
      }
      model->addRow(anyConsumer, -COIN_DBL_MAX, 0);
    }
  }
}

LinExpr RematIlpBuilder::heldOriginal(int32_t value, int32_t j) {
  auto [it, inserted] = heldOriginalMemo.try_emplace({value, j});
  if (!inserted)
    return it->second;
  LinExpr recomputed = LinExpr{{}, 1}.add(keep(value), -1);
  std::optional<int32_t> column;
  for (int32_t m : problem.candidateReaders[value]) {
    LinExpr pending = cloneLater(problem.candidateIndex[m], j);
    if (pending.isZero())
      continue;
    if (!column)
      column = model->addColumn(0, false);
    // Y >= P_{m,j} - r_p
    model->addRow(LinExpr::column(*column).add(pending, -1).add(recomputed), 0, COIN_DBL_MAX);
  }
  if (column)
    it->second = LinExpr::column(*column);
  return it->second;
}

LinExpr RematIlpBuilder::heldClone(int32_t value, int32_t j) {
  auto [it, inserted] = heldCloneMemo.try_emplace({value, j});
  if (!inserted)
    return it->second;
  LinExpr exists = cloned(problem.candidateIndex[graph.producer[value]], j);
  if (exists.isZero())
    return it->second;
  std::optional<int32_t> column;
  for (int32_t m : problem.candidateReaders[value]) {
    LinExpr pending = cloneLater(problem.candidateIndex[m], j);
    if (pending.isZero())
      continue;
    if (!column)
      column = model->addColumn(0, false);
    // Z >= C_{p,j} + P_{m,j} - 1
    model->addRow(LinExpr::column(*column).add(exists, -1).add(pending, -1), -1, COIN_DBL_MAX);
  }
  if (column)
    it->second = LinExpr::column(*column);
  return it->second;
}

void RematIlpBuilder::addValueTerms(std::vector<LinExpr> &live, std::vector<LinExpr> &after,
                                    int32_t value) {
  int32_t producer = graph.producer[value];
  bool fromCandidate = producer >= 0 && problem.candidateIndex[producer] >= 0;
  double bytes = static_cast<double>(graph.valueBytes[value]);
  int32_t backward = problem.lastBackwardReader[value];
  int32_t lastDemand = problem.demands.empty() ? -1 : problem.demands.back();
  int32_t first = std::max(producer, 0);
  int32_t fixedLast =
      graph.keepAlive[value]
          ? problem.steps - 1
          : std::max({first, problem.lastForwardReader[value], fromCandidate ? -1 : backward});
  LinExpr keepIt = keep(value);
  int32_t end = std::max({fixedLast, backward, lastDemand});
  for (int32_t s = first; s <= end; ++s) {
    int32_t j = problem.interval(s);
    auto term = [&](bool strict) -> LinExpr {
      if (strict ? s < fixedLast : s <= fixedLast)
        return LinExpr{{}, 1};
      if (fromCandidate && (strict ? s < backward : s <= backward))
        return keepIt;
      return heldOriginal(value, j);
    };
    live[s].add(term(false), bytes);
    after[s].add(term(true), bytes);
  }
  if (!fromCandidate)
    return;
  // The clone of the value, from its clone's group on.
  for (int32_t s = problem.demands.front(); s <= std::max(backward, lastDemand); ++s) {
    int32_t j = problem.interval(s);
    LinExpr exists = cloned(problem.candidateIndex[producer], j);
    live[s].add(s <= backward ? exists : heldClone(value, j), bytes);
    after[s].add(s < backward ? exists : heldClone(value, j), bytes);
  }
}

void RematIlpBuilder::buildMemoryRows() {
  int32_t steps = problem.steps;
  std::vector<LinExpr> live(steps), after(steps);
  for (int32_t v = 0; v < graph.numValues(); ++v) {
    int32_t producer = graph.producer[v];
    bool touched = producer >= 0 || graph.keepAlive[v] || problem.lastForwardReader[v] >= 0 ||
                   problem.lastBackwardReader[v] >= 0;
    if (!touched)
      continue;
    bool variable = (producer >= 0 && problem.candidateIndex[producer] >= 0) ||
                    !problem.candidateReaders[v].empty();
    if (variable) {
      addValueTerms(live, after, v);
      continue;
    }
    int32_t first = std::max(producer, 0);
    int32_t last =
        graph.keepAlive[v]
            ? steps - 1
            : std::max({first, problem.lastForwardReader[v], problem.lastBackwardReader[v]});
    double bytes = static_cast<double>(graph.valueBytes[v]);
    for (int32_t s = first; s <= last; ++s) {
      live[s].constant += bytes;
      if (s < last)
        after[s].constant += bytes;
    }
  }
  // Rows with the same terms differ only in their constant: keep the largest.
  std::map<std::vector<std::pair<int32_t, double>>, double> rows;
  auto addMemoryRow = [&](LinExpr &expr) {
    expr.normalize();
    auto [it, inserted] = rows.try_emplace(expr.terms, expr.constant);
    if (!inserted)
      it->second = std::max(it->second, expr.constant);
  };
  for (int32_t s = 0; s < steps; ++s)
    addMemoryRow(live[s]);
  for (size_t j = 0; j < problem.demands.size(); ++j) {
    LinExpr group = after[problem.demands[j] - 1];
    for (size_t k = 0; k < problem.candidates.size(); ++k) {
      double bytes = 0;
      for (int32_t v : graph.nodes[problem.candidates[k]].outputs)
        bytes += static_cast<double>(graph.valueBytes[v]);
      group.add(cloned(k, j), bytes).add(cloned(k, static_cast<int32_t>(j) - 1), -bytes);
    }
    addMemoryRow(group);
  }
  for (auto &[terms, constant] : rows)
    model->memory.push_back({terms, constant});
}

bool RematIlpBuilder::build(MipModel &target) {
  model = &target;
  for (int32_t n : problem.candidates)
    rColumns.push_back(model->addColumn(graph.nodes[n].cost, true));
  buildCloneColumns();
  if (Clock::now() > deadline)
    return false;
  buildMemoryRows();
  return Clock::now() <= deadline;
}

/// An upper bound on the model's size, to refuse graphs that cannot be built in time.
size_t estimateNonzeros(const RematProblem &problem) {
  size_t cloneColumns = 0;
  for (size_t k = 0; k < problem.candidates.size(); ++k)
    for (int32_t point : problem.demands)
      cloneColumns += point >= problem.earliest[k] && point < problem.firstDemand[k];
  size_t variableValues = 0;
  for (const auto &readers : problem.candidateReaders)
    variableValues += !readers.empty();
  variableValues += problem.candidates.size();
  return 4 * cloneColumns + variableValues * static_cast<size_t>(problem.steps);
}

struct CbcAnswer {
  std::vector<double> solution; // empty when none was found
  bool provedOptimal = false, provedInfeasible = false;
};

int silentCallback(CbcModel *, int) { return 0; }

/// Says at most every `interval` seconds how CBC's search goes: the best decision's recompute cost,
/// the bound on it, the nodes explored. CBC clones its handlers; the clones share the last report.
class ProgressReporter : public CbcEventHandler {
public:
  ProgressReporter(const IlpOptions &options, Clock::time_point solveStart, double costScale)
      : report(options.progress), interval(options.progressSeconds),
        limit(options.timeLimitSeconds), start(solveStart), costScale(costScale),
        lastReport(std::make_shared<Clock::time_point>(solveStart)) {}

  // Any event is a chance to report: the root's heuristics and cuts, then the nodes.
  CbcAction event(CbcEvent) override {
    Clock::time_point now = Clock::now();
    if (std::chrono::duration<double>(now - *lastReport).count() < interval)
      return noAction;
    *lastReport = now;
    char best[32] = "none yet", text[200];
    if (model_->bestSolution())
      std::snprintf(best, sizeof(best), "%.4g", model_->getObjValue() * costScale);
    std::snprintf(text, sizeof(text),
                  "remat ILP: %.0f s of %.0f s, %d nodes, best recompute cost %s, bound %.4g",
                  secondsSince(start), limit, model_->getNodeCount(), best,
                  model_->getBestPossibleObjValue() * costScale);
    report(text);
    return noAction;
  }
  CbcEventHandler *clone() const override { return new ProgressReporter(*this); }

private:
  std::function<void(const std::string &)> report;
  double interval, limit;
  Clock::time_point start;
  double costScale;
  std::shared_ptr<Clock::time_point> lastReport;
};

/// Solves `model` with memory rows capped at `capacity` bytes, starting from the integer values
/// `start` gives (column, value) if any.
CbcAnswer solveWithCbc(const MipModel &model, double capacity, double seconds,
                       const IlpOptions &options, Clock::time_point solveStart,
                       const std::vector<std::pair<int, double>> &start) {
  const int64_t maxNodes = options.maxNodes;
  CbcAnswer answer;
  std::vector<int> rowIndices, colIndices;
  std::vector<double> elements, rowLower, rowUpper;
  // Bytes in units that keep the capacity near 1e6, where Clp's tolerances are comfortable.
  double unit = std::max(1.0, capacity / 1e6);
  auto append = [&](const LinExpr &row, double scale, double lower, double upper) {
    int index = static_cast<int>(rowLower.size());
    for (auto [col, coef] : row.terms) {
      rowIndices.push_back(index);
      colIndices.push_back(col);
      elements.push_back(coef * scale);
    }
    rowLower.push_back(lower);
    rowUpper.push_back(upper);
  };
  for (size_t i = 0; i < model.structural.size(); ++i)
    append(model.structural[i], 1, model.structuralLower[i], model.structuralUpper[i]);
  for (const LinExpr &row : model.memory) {
    if (row.terms.empty()) {
      if (row.constant > capacity) {
        answer.provedInfeasible = true;
        return answer;
      }
      continue;
    }
    append(row, 1 / unit, -COIN_DBL_MAX, (capacity - row.constant) / unit);
  }
  int columns = static_cast<int>(model.objective.size());
  double costScale = 1;
  for (size_t c = 0; c < model.objective.size(); ++c)
    costScale = std::max(costScale, model.objective[c] / 1e3);
  std::vector<double> objective(columns), colLower(columns, 0), colUpper(columns, 1);
  for (int c = 0; c < columns; ++c)
    objective[c] = model.objective[c] / costScale;
  CoinPackedMatrix matrix(false, rowIndices.data(), colIndices.data(), elements.data(),
                          static_cast<CoinBigIndex>(elements.size()));
  matrix.setDimensions(static_cast<int>(rowLower.size()), columns);

  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.loadProblem(matrix, colLower.data(), colUpper.data(), objective.data(), rowLower.data(),
                     rowUpper.data());
  for (int c = 0; c < columns; ++c)
    if (model.integer[c])
      solver.setInteger(c);
  solver.getModelPtr()->setMaximumSeconds(seconds);
  // A MIP start names its columns.
  std::vector<std::pair<std::string, double>> mipStart;
  for (auto [column, value] : start) {
    std::string name = "c" + std::to_string(column);
    solver.setColName(column, name);
    mipStart.emplace_back(name, value);
  }
  CbcModel cbc(solver);
  if (!mipStart.empty())
    cbc.setMIPStart(mipStart);
  if (options.progress) {
    ProgressReporter reporter(options, solveStart, costScale);
    cbc.passInEventHandler(&reporter);
  }
  cbc.setLogLevel(0);
  cbc.messageHandler()->setLogLevel(0);
  CbcSolverUsefulData data;
  data.noPrinting_ = true;
  data.useSignalHandler_ = false;
  CbcMain0(cbc, data);
  cbc.setLogLevel(0);
  std::string secondsText = std::to_string(std::max(0.01, seconds));
  std::string nodesText = std::to_string(maxNodes > 0 ? maxNodes : std::numeric_limits<int>::max());
  // Preprocessing cost more than it saved on transformerLikeGraph (12 layers: 2.3 s against
  // 1.6 s without).
  const char *argv[] = {"memc-remat-ilp",
                        "-log",
                        "0",
                        "-timeMode",
                        "elapsed",
                        "-seconds",
                        secondsText.c_str(),
                        "-maxNodes",
                        nodesText.c_str(),
                        "-ratioGap",
                        "0",
                        "-preprocess",
                        "off",
                        "-solve",
                        "-quit"};
  CbcMain1(static_cast<int>(std::size(argv)), argv, cbc, silentCallback, data);
  if (const double *best = cbc.bestSolution())
    answer.solution.assign(best, best + columns);
  answer.provedOptimal = cbc.isProvenOptimal() && !answer.solution.empty();
  answer.provedInfeasible =
      cbc.isProvenInfeasible() || (cbc.status() == 0 && answer.solution.empty());
  return answer;
}

} // namespace

IlpResult solveRematIlp(const RematGraph &graph, uint64_t peakLimitBytes,
                        const IlpOptions &options) {
  Clock::time_point start = Clock::now();
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(options.timeLimitSeconds));
  IlpResult result;
  // A start that meets the limit: the answer wherever the solver finds nothing cheaper.
  bool startFits = options.start.size() == static_cast<size_t>(graph.numNodes()) &&
                   simulateRemat(graph, options.start).peakBytes <= peakLimitBytes;
  auto finish = [&](IlpResult &r) -> IlpResult & {
    if (startFits && (!r.solved || simulateRemat(graph, r.decision).recomputeCost >
                                       simulateRemat(graph, options.start).recomputeCost)) {
      r.status = r.solved
                     ? "kept the start decision, which costs less than CBC's (" + r.status + ")"
                     : r.status + "; kept the start decision, which meets the limit";
      r.solved = true;
      r.provedOptimal = false;
      r.decision = options.start;
    }
    r.seconds = secondsSince(start);
    return r;
  };
  result.decision.assign(graph.numNodes(), 0);
  if (simulateRemat(graph, result.decision).peakBytes <= peakLimitBytes) {
    result.solved = result.provedOptimal = true;
    result.status = "the limit holds without recomputation";
    return finish(result);
  }
  if (graph.fixedBytes >= peakLimitBytes) {
    result.status = "infeasible: fixed bytes alone reach the limit";
    return finish(result);
  }
  RematProblem problem(graph);
  // CBC's root LP alone, which its time limit does not interrupt, took about 4 us per nonzero
  // on transformerLikeGraph (48 layers, 2.2M nonzeros: over 8 s); refusing models above this
  // rate keeps the limit, and such models find no decision in time anyway.
  constexpr double kNonzerosPerSecond = 1e5;
  // What CBC spends outside its own clock (loading the model, completing the start, the first
  // LP): 1-3 s at 600k nonzeros on gpt2-124m's step, about 4 us per nonzero, kept out of the
  // time CBC is given so that the limit holds for the whole solve.
  constexpr double kUntimedSecondsPerNonzero = 4e-6;
  size_t estimate = estimateNonzeros(problem);
  if (static_cast<double>(estimate) > kNonzerosPerSecond * options.timeLimitSeconds) {
    result.status = "graph too large for the time limit: about " + std::to_string(estimate) +
                    " nonzeros for " + std::to_string(options.timeLimitSeconds) + " s";
    return finish(result);
  }
  MipModel model;
  RematIlpBuilder builder(problem, deadline);
  if (!builder.build(model)) {
    result.status = "time limit reached while building the model";
    return finish(result);
  }
  // The model is conservative, so the first round should hold; numerical slack or a missed
  // case is absorbed by lowering the model's capacity by the overflow and solving again.
  double capacity = static_cast<double>(peakLimitBytes - graph.fixedBytes);
  constexpr int kMaxRounds = 4;
  for (int round = 0; round < kMaxRounds; ++round) {
    double left = options.timeLimitSeconds - secondsSince(start) -
                  kUntimedSecondsPerNonzero * static_cast<double>(estimate);
    if (left <= 0) {
      result.status = "time limit reached after " + std::to_string(round) + " rounds";
      return finish(result);
    }
    std::vector<std::pair<int, double>> warmStart;
    if (options.start.size() == static_cast<size_t>(graph.numNodes()))
      for (size_t k = 0; k < problem.candidates.size(); ++k)
        warmStart.emplace_back(builder.rColumns[k],
                               options.start[problem.candidates[k]] ? 1.0 : 0.0);
    CbcAnswer answer = solveWithCbc(model, capacity, left, options, start, warmStart);
    if (answer.solution.empty()) {
      result.status = answer.provedInfeasible
                          ? "infeasible: no decision meets the limit in the model (which may "
                            "over-charge groups of several clones)"
                          : "time or node limit reached before CBC found a decision";
      return finish(result);
    }
    RematDecision decision(graph.numNodes(), 0);
    for (size_t k = 0; k < problem.candidates.size(); ++k)
      decision[problem.candidates[k]] = answer.solution[builder.rColumns[k]] > 0.5;
    RematOutcome outcome = simulateRemat(graph, decision);
    if (outcome.peakBytes <= peakLimitBytes) {
      result.solved = true;
      result.provedOptimal = answer.provedOptimal;
      result.decision = std::move(decision);
      result.status = answer.provedOptimal ? "optimal" : "time or node limit reached; best found";
      return finish(result);
    }
    capacity -= static_cast<double>(outcome.peakBytes - peakLimitBytes);
  }
  result.status = "the model's decisions kept exceeding the limit in the simulator";
  return finish(result);
}

uint64_t modelPeakBytes(const RematGraph &graph, const RematDecision &decision) {
  RematSchedule schedule = buildRematSchedule(graph, decision);
  std::vector<uint64_t> live = liveBytesPerStep(schedule);
  int64_t steps = static_cast<int64_t>(schedule.steps.size());
  size_t values = schedule.valueBytes.size();
  ValueLifetimes lifetimes = valueLifetimes(schedule);
  uint64_t peak = 0;
  for (int64_t s = 0; s < steps; ++s) {
    if (!schedule.steps[s].clone) {
      peak = std::max(peak, live[s]);
      continue;
    }
    if (schedule.steps[s - 1].clone)
      continue; // charged with the group it belongs to
    // A group of clones starts at s: charge what lives across step s - 1 and all its clones.
    uint64_t charge = 0;
    for (size_t v = 0; v < values; ++v)
      if (lifetimes.first[v] <= s - 1 && lifetimes.last[v] > s - 1)
        charge += schedule.valueBytes[v];
    for (int64_t g = s; g < steps && schedule.steps[g].clone; ++g)
      for (int32_t value : schedule.outputs(g))
        charge += schedule.valueBytes[value];
    peak = std::max(peak, charge);
  }
  return graph.fixedBytes + peak;
}

} // namespace memc::remat
