//===- DerivedWeights.h - initial values memc makes -------------*- C++ -*-===//
//
// Some parameters' initial values are not in the model: memc makes them when it writes the
// program, from the arguments' kDerivedAttr (dialects/memc/MemcDialect.h). A LoRA A
// matrix is drawn kaiming-uniform as nn.init.kaiming_uniform_(a=sqrt(5)) draws nn.Linear's
// weight: uniform on +-1/sqrt(in), each element a pure function of (--seed, its name, its
// index: splitmix64 keyed by FNV-1a of the name); B is zeros; an NF4 weight's packed codes and
// absmax replace its stored values in the store as entries made when read
// (kernels/NormalFloat4.h): the program writer quantizes one weight at a time and drops each
// part once written. Only when a program is written: a report-only compile quantizes nothing.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_LOWERING_DERIVEDWEIGHTS_H
#define MEMC_COMPILER_LOWERING_DERIVEDWEIGHTS_H

#include "compiler/importer/WeightStore.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <string>

namespace memc {

/// Adds the initial values of `forward`'s derived arguments to `weights` under their names.
/// False with a message naming the tensor when a stored weight cannot be read.
bool addDerivedWeights(mlir::func::FuncOp forward, uint64_t seed, WeightStore &weights,
                       std::string &error);

/// Element `index` of LoRA A matrix `name` [rank, in], for `seed`.
float kaimingUniform(uint64_t seed, const std::string &name, int64_t in, int64_t index);

} // namespace memc

#endif // MEMC_COMPILER_LOWERING_DERIVEDWEIGHTS_H
