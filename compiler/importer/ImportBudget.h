//===- ImportBudget.h - one bound on an import's work -----------*- C++ -*-===//
//
// Per-node limits do not bound a model: two nested Loops of 4096 iterations each (a 693-byte
// file) unrolled toward 16.7 million iterations until LLVM ran out of memory, and a Loop whose
// body stacks a 4M-element Range into a scan output folded 4096 of them. One budget per import
// counts what unrolling and folding create across the whole model, nested Loops included, and
// the import stops with an error naming the node that passes it.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_IMPORTER_IMPORTBUDGET_H
#define MEMC_COMPILER_IMPORTER_IMPORTBUDGET_H

#include <cstdint>
#include <string>

namespace memc {

class ImportBudget {
public:
  /// Body nodes imported by unrolling, over every Loop of the model (an EmbeddingBag's Loop
  /// imports a few per bag).
  static constexpr int64_t kMaxUnrolledNodes = int64_t(1) << 18;
  /// Elements of the constants host folding makes, over the whole import: 2^26, 512 MiB as the
  /// host folder holds them (8 bytes each), far above what real models fold (shapes, masks,
  /// index tables) and four of the largest constant one fold may make (kMaxHostElements).
  static constexpr int64_t kMaxFoldedElements = int64_t(1) << 26;

  /// Counts the body nodes of one more unrolled iteration; false with why past the limit.
  bool spendUnrolledNodes(int64_t nodes, std::string &why);
  /// Counts the elements of a constant host folding made; false with why past the limit.
  bool spendFoldedElements(int64_t elements, std::string &why);

private:
  int64_t unrolledNodes = 0, foldedElements = 0;
};

} // namespace memc

#endif // MEMC_COMPILER_IMPORTER_IMPORTBUDGET_H
