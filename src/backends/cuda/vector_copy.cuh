// Fast copies for the CUDA data movers (shuffle, slice): a strided copy whose output is row-major
// is seen, after collapsing, as runs of R contiguous bytes, each read from one place in the input.
// The per-element reference decodes every element's coordinates at 64 bits; here the copy moves
// one vector (16, 8, 4, 2 or 1 bytes, the widest that the run, every input stride, the input
// offset and both pointers allow) per thread, with 32-bit index math where the sizes fit, and
// decodes coordinates only over the collapsed axes. Per vector, so it runs emulated on the host
// too. When the innermost axis moves (a true transpose, no contiguous run) a shared-memory tiled
// transpose does better; it has no host emulation.
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/element_size.cuh"
#include "backends/cuda/elements.cuh"

namespace kiln::cuda {

// A copy out[o] = in[base + sum c_k * inStride_k] over a row-major output of dims[0..rank),
// strides in elements, after collapsing: no axis of size 1, no two adjacent axes that walk the
// input as one. `runElems` is the length of the innermost axis when it is contiguous in the
// input (stride 1), else 1: the run copied as one piece.
struct CollapsedCopy {
  int32_t rank = 0;
  int64_t dims[Dims::kMaxDims] = {};
  int64_t inStride[Dims::kMaxDims] = {};  // elements
  int64_t base = 0;                       // elements
  int64_t count = 0;                      // output elements
  int64_t elemSize = 0;
  // True when the innermost axis is contiguous in the input (so a run is more than one element
  // unless the tensor is); false for a transpose of the innermost axis.
  bool innerContiguous() const { return rank == 0 || inStride[rank - 1] == 1; }
  int64_t runElems() const { return rank == 0 ? 1 : innerContiguous() ? dims[rank - 1] : 1; }
};

inline CollapsedCopy collapseCopy(int32_t rank, const int64_t* dims, const int64_t* inStride,
                                  int64_t base, int64_t elemSize) {
  CollapsedCopy c;
  c.base = base;
  c.elemSize = elemSize;
  c.count = 1;
  for (int32_t k = 0; k < rank; ++k) c.count *= dims[k];
  if (c.count == 0) return c;
  // Outer to inner, keeping axes of size > 1 and merging an axis into the one before it when the
  // outer one's stride is exactly the inner one's extent.
  for (int32_t k = 0; k < rank; ++k) {
    if (dims[k] == 1) continue;
    if (c.rank > 0 && c.inStride[c.rank - 1] == inStride[k] * dims[k]) {
      c.dims[c.rank - 1] *= dims[k];
      c.inStride[c.rank - 1] = inStride[k];
      continue;
    }
    c.dims[c.rank] = dims[k];
    c.inStride[c.rank] = inStride[k];
    ++c.rank;
  }
  return c;
}

// Calls f(V{}) with V the type of a `bytes`-wide vector (16, 8, 4, 2 or 1; uint4's alignment is
// 16, so a load of one is one 128-bit instruction) and returns what it returns.
template <class F>
Status byVectorBytes(int bytes, F&& f) {
  switch (bytes) {
    case 16:
      return f(uint4{});
    case 8:
      return f(uint2{});
    case 4:
      return f(uint32_t{});
    case 2:
      return f(uint16_t{});
    default:
      return f(uint8_t{});
  }
}

// The widest of 16, 8, 4, 2, 1 bytes that divides `bits`, the OR of byte counts, offsets and
// addresses: a power of two divides each of them exactly when it divides their OR.
inline int widestVector(uint64_t bits) {
  for (int v : {16, 8, 4, 2})
    if (bits % static_cast<uint64_t>(v) == 0) return v;
  return 1;
}

// One vector per index: vector i of the output is vector r of its run t, read at
// base + r + (input offset of run t), every quantity in vectors. I is int32_t when every index and
// offset fits, int64_t otherwise.
template <class V, class I>
struct RunCopyOp {
  const V* in;
  V* out;
  int32_t outerRank;  // axes before the run
  I dims[Dims::kMaxDims];
  I stride[Dims::kMaxDims];  // vectors
  I base, runVectors;
  __host__ __device__ void operator()(int64_t index) const {
    const I i = static_cast<I>(index);
    I t = i / runVectors;
    I off = base + (i - t * runVectors);
#pragma unroll
    for (int32_t k = Dims::kMaxDims - 1; k >= 0; --k) {
      if (k < outerRank) {
        const I q = t / dims[k];
        off += (t - q * dims[k]) * stride[k];
        t = q;
      }
    }
    out[i] = in[off];
  }
};

template <class V, class I>
Status launchRunCopy(const CollapsedCopy& c, int vectorBytes, const void* in, void* out,
                     const RunContext& ctx, const char* name) {
  const int64_t perVector = vectorBytes / c.elemSize;  // elements (>= 1: the vector divides runs)
  RunCopyOp<V, I> op{};
  op.in = static_cast<const V*>(in);
  op.out = static_cast<V*>(out);
  const int64_t runElems = c.runElems();
  op.outerRank = c.innerContiguous() ? c.rank - 1 : c.rank;
  for (int32_t k = 0; k < op.outerRank; ++k) {
    op.dims[k] = static_cast<I>(c.dims[k]);
    op.stride[k] = static_cast<I>(c.inStride[k] / perVector);
  }
  op.base = static_cast<I>(c.base / perVector);
  op.runVectors = static_cast<I>(runElems / perVector);
  return launchElements(op, c.count / perVector, ctx, name);
}

// Sum of |stride| * (dim - 1) plus the base and the count: a bound on every index and offset the
// copy computes, in elements.
inline int64_t indexBound(const CollapsedCopy& c) {
  int64_t b = c.base + c.count;
  for (int32_t k = 0; k < c.rank; ++k)
    b += (c.inStride[k] < 0 ? -c.inStride[k] : c.inStride[k]) * (c.dims[k] - 1);
  return b;
}

// Runs the collapsed copy as vectors of the widest size its geometry and the pointers allow.
inline Status runCollapsedCopy(const CollapsedCopy& c, const void* in, void* out,
                               const RunContext& ctx, const char* name) {
  if (c.count == 0) return Status::ok();
  const auto e = static_cast<uint64_t>(c.elemSize);
  int v = static_cast<int>(e);
  if (c.innerContiguous()) {
    // Every run starts at base + sum c_k * stride_k (elements) in the input and at a multiple of
    // the run in the output: the vector must divide all of them, in bytes, and the addresses.
    uint64_t g = 0;  // OR of the byte quantities: divisible by v iff each is
    g |= static_cast<uint64_t>(c.runElems()) * e;
    g |= static_cast<uint64_t>(c.base) * e;
    for (int32_t k = 0; k + 1 < c.rank; ++k)
      g |= static_cast<uint64_t>(c.inStride[k] < 0 ? -c.inStride[k] : c.inStride[k]) * e;
    g |= reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out);
    v = widestVector(g);
    if (v < static_cast<int>(e)) v = static_cast<int>(e);  // elements are naturally aligned
  }
  const int64_t perVector = v / c.elemSize;
  const bool narrow = indexBound(c) / perVector < (int64_t{1} << 31) - 1;
  return byVectorBytes(v, [&](auto vec) {
    using V = decltype(vec);
    return narrow ? launchRunCopy<V, int32_t>(c, v, in, out, ctx, name)
                  : launchRunCopy<V, int64_t>(c, v, in, out, ctx, name);
  });
}

// The tiled transpose of a collapsed copy whose innermost output axis is not contiguous in the
// input: the input's contiguous axis b and the output's innermost axis a form the plane of 32x32
// tiles; a block reads a tile along b (coalesced), and writes it along a (coalesced) through
// shared memory padded to 33 columns so that the column reads hit distinct banks. The other axes
// are the batch, one per blockIdx.z (looping past 65535).
struct TransposeGeometry {
  int32_t batchRank = 0;
  int64_t batchDims[Dims::kMaxDims] = {};
  int64_t batchIn[Dims::kMaxDims] = {}, batchOut[Dims::kMaxDims] = {};  // strides, elements
  int64_t batch = 1;
  int64_t A = 1, B = 1;           // extents of the output's innermost axis and the input's
  int64_t inStrideA = 0;          // input stride along a (along b it is 1)
  int64_t outStrideB = 0;         // output stride along b (along a it is 1)
  int64_t base = 0;               // input elements
  int64_t tilesA = 1, tiles = 1;  // tiles along a, and in the plane
};

// The geometry of a collapsed copy that is not innerContiguous(); false (with *why set) when
// the plane's tiles would not fit one grid dimension.
inline bool transposeGeometry(const CollapsedCopy& c, TransposeGeometry& g, std::string* why) {
  int64_t outStride[Dims::kMaxDims] = {};
  int64_t s = 1;
  for (int32_t k = c.rank - 1; k >= 0; --k) {
    outStride[k] = s;
    s *= c.dims[k];
  }
  const int32_t a = c.rank - 1;
  int32_t b = -1;
  for (int32_t k = 0; k < c.rank; ++k)
    if (c.inStride[k] == 1) b = k;
  if (a < 0 || b < 0 || b == a) {
    if (why) *why = "no axis is contiguous in the input apart from the output's innermost";
    return false;
  }
  g = TransposeGeometry{};
  g.A = c.dims[a];
  g.B = c.dims[b];
  g.inStrideA = c.inStride[a];
  g.outStrideB = outStride[b];
  g.base = c.base;
  for (int32_t k = 0; k < c.rank; ++k) {
    if (k == a || k == b) continue;
    g.batchDims[g.batchRank] = c.dims[k];
    g.batchIn[g.batchRank] = c.inStride[k];
    g.batchOut[g.batchRank] = outStride[k];
    g.batch *= c.dims[k];
    ++g.batchRank;
  }
  g.tilesA = (g.A + 31) / 32;
  g.tiles = g.tilesA * ((g.B + 31) / 32);
  if (g.tiles > int64_t{0x7fffffff}) {
    if (why) *why = std::to_string(g.tiles) + " tiles do not fit one grid dimension";
    return false;
  }
  return true;
}

template <class T>
__global__ void tiledTransposeKernel(const T* in, T* out, TransposeGeometry g) {
  __shared__ T tile[32][33];
  const int64_t ta = blockIdx.x % g.tilesA, tb = blockIdx.x / g.tilesA;
  const int64_t a0 = ta * 32, b0 = tb * 32;
  for (int64_t z = blockIdx.z; z < g.batch; z += gridDim.z) {
    int64_t inBase = g.base, outBase = 0, rem = z;
    for (int32_t k = g.batchRank - 1; k >= 0; --k) {
      const int64_t c = rem % g.batchDims[k];
      rem /= g.batchDims[k];
      inBase += c * g.batchIn[k];
      outBase += c * g.batchOut[k];
    }
    // Read along b (threadIdx.x), the input's contiguous axis.
    for (int j = threadIdx.y; j < 32; j += blockDim.y) {
      const int64_t a = a0 + j, b = b0 + threadIdx.x;
      if (a < g.A && b < g.B) tile[j][threadIdx.x] = in[inBase + a * g.inStrideA + b];
    }
    __syncthreads();
    // Write along a (threadIdx.x), the output's contiguous axis.
    for (int j = threadIdx.y; j < 32; j += blockDim.y) {
      const int64_t a = a0 + threadIdx.x, b = b0 + j;
      if (a < g.A && b < g.B) out[outBase + b * g.outStrideB + a] = tile[threadIdx.x][j];
    }
    __syncthreads();  // the tile is reused for the next batch index
  }
}

// Enqueues the tiled transpose; kUnsupported under emulation (a block shares its tile).
inline Status runTiledTranspose(const TransposeGeometry& g, size_t elemSize, const void* in,
                                void* out, const RunContext& ctx, const char* name) {
  if (ctx.emulate)
    return unsupported(std::string(name) +
                       ": a shared-memory tiled transpose, which has no host emulation");
  if (g.batch == 0 || g.A == 0 || g.B == 0) return Status::ok();
  return bySize(elemSize, [&](auto u) {
    using U = decltype(u);
    const dim3 block(32, 8);
    const dim3 grid(static_cast<unsigned>(g.tiles), 1,
                    static_cast<unsigned>(g.batch < 65535 ? g.batch : 65535));
    tiledTransposeKernel<U><<<grid, block, 0, static_cast<cudaStream_t>(ctx.stream)>>>(
        static_cast<const U*>(in), static_cast<U*>(out), g);
    KILN_CHECK_LAUNCH(name);
    return Status::ok();
  });
}

}  // namespace kiln::cuda
