//===- OneDnnThreads.h - oneDNN's engine and OpenMP thread count -*- C++ -*-===//
//
// Debian's oneDNN runs on OpenMP and reads the calling thread's omp_get_max_threads() when a
// primitive descriptor or a primitive is made and when it runs, so a thread count is set around
// each of the three (a primitive made at the default count ran its 1-thread descriptor on 2
// threads, spinning). The convolutions and the matmuls share both pieces.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_ONEDNNTHREADS_H
#define MEMC_KERNELS_CPU_ONEDNNTHREADS_H

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

namespace memc::kernels {

/// Sets the calling thread's OpenMP thread count for its scope, as oneDNN reads it.
class OneDnnThreadsScope {
public:
  explicit OneDnnThreadsScope(int threads) : previous(omp_get_max_threads()) {
    omp_set_num_threads(threads);
  }
  ~OneDnnThreadsScope() { omp_set_num_threads(previous); }
  OneDnnThreadsScope(const OneDnnThreadsScope &) = delete;
  OneDnnThreadsScope &operator=(const OneDnnThreadsScope &) = delete;

private:
  int previous;
};

/// The CPU engine every memc oneDNN primitive runs on.
inline dnnl::engine &oneDnnCpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_ONEDNNTHREADS_H
