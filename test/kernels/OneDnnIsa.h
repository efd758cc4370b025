//===- OneDnnIsa.h - what oneDNN can run on this CPU ------------*- C++ -*-===//
//
// The selection rules (OneDnnMatMul.h, OneDnnConvolution.h) give bf16 to oneDNN only where it
// has optimized kernels for this CPU: from AVX512 (avx512_core, bf16 emulated; AVX512-BF16 and
// AMX natively) up. On a CPU with AVX2 at most its bf16 primitives are reference loops, and
// memc's kernels run bf16. The tests ask this, not the rule, which side a call should be on.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TEST_KERNELS_ONEDNNISA_H
#define MEMC_TEST_KERNELS_ONEDNNISA_H

#include <dnnl.hpp>

namespace memc::kernels::testing {

/// Whether oneDNN has optimized bf16 kernels on this CPU (its ISA includes avx512_core).
inline bool oneDnnHasBf16Kernels() {
  auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  return (isa & avx512) == avx512;
}

} // namespace memc::kernels::testing

#endif // MEMC_TEST_KERNELS_ONEDNNISA_H
