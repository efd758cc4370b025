//===- HostDevice.h - functions both the host and CUDA code call -*- C++ -*-===//
//
// MEMC_HOST_DEVICE marks a function nvcc compiles for the GPU as well as the host, so that one
// copy of an arithmetic rule (a dropout mask, an NF4 code, an f32 -> bf16 rounding) serves the
// CPU kernels, the CUDA kernels and the host tests that check the CUDA kernels' arithmetic.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_HOSTDEVICE_H
#define MEMC_KERNELS_HOSTDEVICE_H

#if defined(__CUDACC__)
#define MEMC_HOST_DEVICE __host__ __device__
#else
#define MEMC_HOST_DEVICE
#endif

#endif // MEMC_KERNELS_HOSTDEVICE_H
