// 16-byte vector access for kiln's memory-bound kernels: Vec<T, N> is N elements of T aligned to
// their whole size, so that a load or store of one is a single 16-byte instruction on the GPU
// (LDG.128/STG.128) instead of N narrow ones, which is what lets an element kernel reach the
// GPU's bandwidth. The same code runs on the host under RunContext::emulate. A caller uses a
// vector only where its address is a multiple of sizeof(Vec) (isAligned).
#pragma once

#include <cstdint>

namespace kiln::cuda {

// Elements of T in one 16-byte vector: 4 fp32, 8 fp16/bf16, 2 int64, 16 bool bytes.
template <class T>
inline constexpr int kVectorElements = sizeof(T) <= 16 ? static_cast<int>(16 / sizeof(T)) : 1;

template <class T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

template <int N, class T>
__host__ __device__ inline Vec<T, N> loadVec(const T* p) {
  return *reinterpret_cast<const Vec<T, N>*>(p);
}

template <int N, class T>
__host__ __device__ inline void storeVec(T* p, const Vec<T, N>& v) {
  *reinterpret_cast<Vec<T, N>*>(p) = v;
}

// Whether p may be accessed as a 16-byte vector.
inline bool isAligned(const void* p, uintptr_t bytes = 16) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

}  // namespace kiln::cuda
