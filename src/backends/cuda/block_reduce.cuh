// Building blocks for kiln's CUDA kernels that give each row (a contiguous run of elements
// reduced to one value: a softmax row, a reduced row, an instance-norm slice) one thread block:
// the launch shape, a block-wide reduction, and the status such a kernel returns under
// RunContext::emulate (a block reduction has no host emulation).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/kernel.h"
#include "kiln/status.h"

namespace kiln::cuda {

__device__ inline float shflXor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ inline double shflXor(double v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }

// The butterfly reduction over one warp: every lane ends with the reduction of all 32 lanes' v
// (the warp-per-row kernels use it alone, blockReduce as its first step).
template <class V, class F>
__device__ inline V warpReduce(V v, F f) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = f(v, shflXor(v, o));
  return v;
}

// Every thread of the block gets the reduction of all threads' v. blockDim.x is a multiple of 32
// (at most 1024); safe to call repeatedly in one kernel. Other value types V bring their own
// shflXor(V, int), found by argument-dependent lookup.
template <class V, class F>
__device__ V blockReduce(V v, F f) {
  __shared__ V partial[32];
  v = warpReduce(v, f);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
  __syncthreads();  // a previous call may still be reading `partial`
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = partial[0];
  for (int w = 1; w < warps; ++w) v = f(v, partial[w]);  // same order in every thread
  return v;
}

struct SumF {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct SumD {
  __device__ double operator()(double a, double b) const { return a + b; }
};

// Threads per block for rows of `len` elements: a multiple of 32 in [32, 512].
inline int threadsFor(int64_t len) {
  const int64_t t = (len + 31) / 32 * 32;
  return static_cast<int>(t < 32 ? 32 : (t > 512 ? 512 : t));
}
// Blocks for `rows` rows: one per row, at most 2^20 (each block loops over the rest).
inline unsigned blocksFor(int64_t rows) {
  return static_cast<unsigned>(rows < (int64_t{1} << 20) ? rows : (int64_t{1} << 20));
}

// What run() returns under RunContext::emulate.
inline Status notEmulated(const char* tactic) {
  return unsupported(std::string(tactic) +
                     ": a block-reduction kernel, which has no host emulation");
}

// The run of a block-per-row tactic over `rows` rows of `len` elements: launch(blocks, threads,
// stream) enqueues the kernel with the launch shape above. Written once so that every such tactic
// refuses emulation, skips an empty launch (a grid of 0 blocks is an error) and checks the launch
// alike; `tactic` names it in the emulation status, `kernel` in a launch error.
template <class Launch>
Status launchBlockPerRow(const char* tactic, const char* kernel, int64_t rows, int64_t len,
                         const RunContext& ctx, const Launch& launch) {
  if (ctx.emulate) return notEmulated(tactic);
  if (rows == 0) return Status::ok();
  launch(blocksFor(rows), threadsFor(len), static_cast<cudaStream_t>(ctx.stream));
  return checkLaunch(kernel, __FILE__, __LINE__);
}

}  // namespace kiln::cuda
