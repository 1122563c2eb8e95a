// KILN_HOST_DEVICE marks a function that both backends compile: __host__ __device__ under nvcc,
// nothing for the host compiler. An op's semantics header (src/ops/<op>/<op>_semantics.h) uses it
// for the index arithmetic and edge-case rules that its CPU and CUDA kernels share, so the two
// backends cannot drift apart.
#pragma once

#if defined(__CUDACC__)
#define KILN_HOST_DEVICE __host__ __device__
#else
#define KILN_HOST_DEVICE
#endif
