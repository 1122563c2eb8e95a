// The CUDA data movers: shuffle, concatenation, slice, padding, tile, expand, gather, select and
// reformat. Semantics are exactly the CPU reference tactics' (backends/cpu/*.cpp).
//
// The movers copy elements without looking at them, so they are written per element size
// (1, 2, 4, 8 bytes, as unsigned integers) and one kernel serves every data type. They work on
// linear tensors only (like the CPU ones) and decline channels-last; reformat converts between
// every type pair ops::Reformat::infer allows and between linear and channels-last in one pass.
//
// Every kernel is a per-element functor launched with launchElements (grid-stride on the GPU,
// a host loop under RunContext::emulate). A kernel object holds only what creation computed;
// run() keeps no state, allocates nothing and never synchronizes.
#include <cstring>
#include <limits>
#include <type_traits>

#include "backends/cuda/data_movement.h"
#include "backends/cuda/elements.cuh"
#include "ops/op.h"

namespace kiln::cuda::dm {
namespace {

constexpr int32_t kMaxRank = Dims::kMaxDims;

// Calls f(U{}) with U the unsigned integer of `size` bytes.
template <class F>
Status bySize(size_t size, F&& f) {
  switch (size) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    case 8:
      return f(uint64_t{});
    default:
      return internalError("data movement: element size " + std::to_string(size));
  }
}

// A plain byte copy on the stream (or on the host under emulation).
Status copyBytes(void* dst, const void* src, size_t bytes, const RunContext& ctx) {
  if (bytes == 0 || dst == src) return Status::ok();
  if (ctx.emulate) {
    std::memcpy(dst, src, bytes);
    return Status::ok();
  }
  KILN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                  static_cast<cudaStream_t>(ctx.stream)));
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// The axis map: the engine of shuffle, slice, padding, tile and expand. Output element i is
// decoded into row-major coordinates; each axis turns its coordinate j into an input coordinate
// by its rule, or marks the element as padding. Rules were built and checked at creation, so
// every input offset is inside the input.

enum AxisKind : int32_t { kAffine = 0, kTile = 1, kPadConstant = 2, kPadReflect = 3, kPadEdge = 4 };

struct Axis {
  int64_t outDim = 1;
  int64_t inDim = 1;
  int64_t inStride = 0;  // elements
  int64_t start = 0;     // kAffine: input coordinate start + j * step
  int64_t step = 1;
  int64_t before = 0;  // padding: input coordinate j - before
  int32_t kind = kAffine;
};

struct AxisMap {
  int32_t rank = 0;
  Axis axes[kMaxRank];
  uint64_t fill = 0;  // padding value, low bytes
  int64_t count = 0;  // output elements
};

template <class T>
struct MapOp {
  const T* in;
  T* out;
  AxisMap m;
  T fill;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t rem = i, off = 0;
    bool pad = false;
    for (int32_t k = m.rank - 1; k >= 0; --k) {
      const Axis& a = m.axes[k];
      const int64_t j = rem % a.outDim;
      rem /= a.outDim;
      int64_t s;
      if (a.kind == kAffine) {
        s = a.start + j * a.step;
      } else if (a.kind == kTile) {
        s = j % a.inDim;
      } else {
        s = j - a.before;
        if (s < 0 || s >= a.inDim) {
          if (a.kind == kPadReflect)  // inference keeps pads below the dim: one reflection
            s = s < 0 ? -s : 2 * (a.inDim - 1) - s;
          else if (a.kind == kPadEdge)
            s = s < 0 ? 0 : a.inDim - 1;
          else {
            pad = true;
            s = 0;
          }
        }
      }
      off += s * a.inStride;
    }
    out[i] = pad ? fill : in[off];
  }
};

Status runMap(const AxisMap& m, size_t elemSize, const void* in, void* out, const RunContext& ctx,
              const char* name) {
  return bySize(elemSize, [&](auto u) {
    using U = decltype(u);
    U fill;
    std::memcpy(&fill, &m.fill, sizeof fill);  // little-endian: the low bytes hold the value
    return launchElements(MapOp<U>{static_cast<const U*>(in), static_cast<U*>(out), m, fill},
                          m.count, ctx, name);
  });
}

void rowMajorStrides(const Dims& d, int64_t* strides) {
  int64_t s = 1;
  for (int32_t i = d.nbDims - 1; i >= 0; --i) {
    strides[i] = s;
    s *= d.d[i];
  }
}

// A map with one axis per output dim, input strides of `in` (same rank), all rules kAffine
// identity; callers then change the rules.
AxisMap identityMap(const Dims& in, const Dims& out) {
  AxisMap m;
  m.rank = out.nbDims;
  int64_t strides[kMaxRank] = {};
  rowMajorStrides(in, strides);
  for (int32_t k = 0; k < out.nbDims; ++k) {
    m.axes[k].outDim = out.d[k];
    m.axes[k].inDim = in.d[k];
    m.axes[k].inStride = strides[k];
  }
  m.count = volume(out);
  return m;
}

class MapKernel final : public Kernel {
 public:
  MapKernel(AxisMap m, size_t elemSize, const char* name)
      : m_(m), elemSize_(elemSize), name_(name) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    return runMap(m_, elemSize_, in[0], out[0], ctx, name_);
  }

 private:
  AxisMap m_;
  size_t elemSize_;
  const char* name_;
};

// ---------------------------------------------------------------------------------------------
// Shuffle: first transpose, reshape (no data movement in linear format), second transpose. As on
// the CPU, at most two permuted copies; when both transposes really permute, the first goes to
// the workspace and the second reads it back.

bool isIdentity(const int32_t* perm, int32_t rank) {
  for (int32_t i = 0; i < rank; ++i)
    if (perm[i] != i) return false;
  return true;
}

// The map of a permuted copy: output dim i is input dim perm[i]; `in` row-major.
AxisMap permuteMap(const Dims& in, const int32_t* perm) {
  AxisMap m;
  m.rank = in.nbDims;
  int64_t strides[kMaxRank] = {};
  rowMajorStrides(in, strides);
  for (int32_t i = 0; i < in.nbDims; ++i) {
    m.axes[i].outDim = in.d[perm[i]];
    m.axes[i].inDim = in.d[perm[i]];
    m.axes[i].inStride = strides[perm[i]];
  }
  m.count = volume(in);
  return m;
}

class ShuffleKernel final : public Kernel {
 public:
  ShuffleKernel(size_t elemSize, int64_t bytes, bool first, AxisMap p1, bool second, AxisMap p2)
      : elemSize_(elemSize), bytes_(bytes), first_(first), p1_(p1), second_(second), p2_(p2) {}

  size_t workspaceSize() const override {
    return first_ && second_ ? static_cast<size_t>(bytes_) : 0;
  }

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (bytes_ == 0) return Status::ok();
    if (first_ && second_) {
      Status s = runMap(p1_, elemSize_, in[0], workspace, ctx, "shuffle_transpose1");
      if (!s) return s;
      return runMap(p2_, elemSize_, workspace, out[0], ctx, "shuffle_transpose2");
    }
    if (first_) return runMap(p1_, elemSize_, in[0], out[0], ctx, "shuffle_transpose1");
    if (second_) return runMap(p2_, elemSize_, in[0], out[0], ctx, "shuffle_transpose2");
    return copyBytes(out[0], in[0], static_cast<size_t>(bytes_), ctx);
  }

 private:
  size_t elemSize_;
  int64_t bytes_;
  bool first_;
  AxisMap p1_;
  bool second_;
  AxisMap p2_;
};

}  // namespace

std::unique_ptr<Kernel> createShuffle(const KernelConfig& c, std::string* whyNot) {
  const ShuffleParams* p = validate<ShuffleParams>(c, "shuffle", 1, true, whyNot);
  if (!p) return nullptr;
  const size_t elemSize = dataTypeSize(c.inputs[0].type);
  const Dims& inDims = c.inputs[0].dims;
  const Dims& outDims = c.outputs[0].dims;
  const bool first = p->hasFirstTranspose && !isIdentity(p->firstTranspose, inDims.nbDims);
  const bool second = p->hasSecondTranspose && !isIdentity(p->secondTranspose, outDims.nbDims);
  AxisMap p1, p2;
  if (first) p1 = permuteMap(inDims, p->firstTranspose);
  if (second) {
    // Dims before the second transpose: the output dims permuted back (inference has checked
    // that both permutations are valid for their ranks).
    Dims mid;
    mid.nbDims = outDims.nbDims;
    for (int32_t i = 0; i < outDims.nbDims; ++i) mid.d[p->secondTranspose[i]] = outDims.d[i];
    p2 = permuteMap(mid, p->secondTranspose);
  }
  const int64_t bytes = volume(inDims) * static_cast<int64_t>(elemSize);
  return std::make_unique<ShuffleKernel>(elemSize, bytes, first, p1, second, p2);
}

// ---------------------------------------------------------------------------------------------
// Slice, padding, tile, expand: one axis map each.

std::unique_ptr<Kernel> createSlice(const KernelConfig& c, std::string* whyNot) {
  const SliceParams* p = validate<SliceParams>(c, "slice", 1, true, whyNot);
  if (!p) return nullptr;
  AxisMap m = identityMap(c.inputs[0].dims, c.outputs[0].dims);
  for (int32_t i = 0; i < m.rank; ++i) {  // inference proved every read inside the input
    m.axes[i].start = p->starts.d[i];
    m.axes[i].step = p->steps.d[i];
  }
  return std::make_unique<MapKernel>(m, dataTypeSize(c.inputs[0].type), "slice");
}

namespace {

// An integer cast that saturates (and maps NaN to 0), as the CPU padding does.
template <class I>
I saturate(float v) {
  if (v != v) return 0;
  if (v <= static_cast<float>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<float>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// The constant padding value in the tensor's type, as the low bytes of a uint64 (the CPU
// padding's fillBits; fp16/bf16 round to nearest even).
uint64_t fillBits(float value, DataType type) {
  uint64_t bits = 0;
  auto put = [&](auto v) { std::memcpy(&bits, &v, sizeof v); };
  switch (type) {
    case DataType::kFLOAT:
      put(value);
      break;
    case DataType::kHALF:
      put(__float2half_rn(value));
      break;
    case DataType::kBF16:
      put(__float2bfloat16_rn(value));
      break;
    case DataType::kINT8:
      put(saturate<int8_t>(value));
      break;
    case DataType::kINT32:
      put(saturate<int32_t>(value));
      break;
    case DataType::kINT64:
      put(saturate<int64_t>(value));
      break;
    case DataType::kBOOL:
      put(static_cast<uint8_t>(value != 0.f));
      break;
  }
  return bits;
}

}  // namespace

std::unique_ptr<Kernel> createPadding(const KernelConfig& c, std::string* whyNot) {
  const PaddingParams* p = validate<PaddingParams>(c, "padding", 1, true, whyNot);
  if (!p) return nullptr;
  AxisMap m = identityMap(c.inputs[0].dims, c.outputs[0].dims);
  const int32_t kind = p->mode == PaddingMode::kREFLECT ? kPadReflect
                       : p->mode == PaddingMode::kEDGE  ? kPadEdge
                                                        : kPadConstant;
  for (int32_t i = 0; i < m.rank; ++i) {
    m.axes[i].kind = kind;
    m.axes[i].before = p->before[i];
  }
  const DataType type = c.inputs[0].type;
  m.fill = fillBits(p->value, type);
  return std::make_unique<MapKernel>(m, dataTypeSize(type), "padding");
}

std::unique_ptr<Kernel> createTile(const KernelConfig& c, std::string* whyNot) {
  const TileParams* p = validate<TileParams>(c, "tile", 1, true, whyNot);
  if (!p) return nullptr;
  AxisMap m = identityMap(c.inputs[0].dims, c.outputs[0].dims);
  for (int32_t i = 0; i < m.rank; ++i) m.axes[i].kind = kTile;  // out > 0 implies in > 0
  return std::make_unique<MapKernel>(m, dataTypeSize(c.inputs[0].type), "tile");
}

std::unique_ptr<Kernel> createExpand(const KernelConfig& c, std::string* whyNot) {
  const ExpandParams* p = validate<ExpandParams>(c, "expand", 1, true, whyNot);
  if (!p) return nullptr;
  const Dims& out = c.outputs[0].dims;
  // The input seen at the output's rank: leading 1s where it has fewer dims.
  Dims in;
  in.nbDims = out.nbDims;
  const int32_t lead = out.nbDims - c.inputs[0].dims.nbDims;
  for (int32_t i = 0; i < out.nbDims; ++i) in.d[i] = i < lead ? 1 : c.inputs[0].dims.d[i - lead];
  AxisMap m = identityMap(in, out);
  for (int32_t i = 0; i < m.rank; ++i)
    if (in.d[i] == 1) m.axes[i].step = 0;  // broadcast: always input coordinate 0
  return std::make_unique<MapKernel>(m, dataTypeSize(c.inputs[0].type), "expand");
}

// ---------------------------------------------------------------------------------------------
// Concatenation: seen as [outer, axis_i * inner], input i contributes one contiguous block per
// outer index at column offset colOffset_i of the output row.

namespace {

struct ConcatPart {
  int64_t blockElems = 0;  // axis_i * inner
  int64_t colOffset = 0;   // elements before this input in an output row
};

template <class T>
struct ConcatOp {
  const T* in;
  T* out;
  int64_t blockElems, rowElems, colOffset;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t o = i / blockElems, r = i - o * blockElems;
    out[o * rowElems + colOffset + r] = in[i];
  }
};

struct ConcatLayout {
  int64_t outer = 0, rowElems = 0;
  size_t elemSize = 0;
  std::vector<ConcatPart> parts;
};

ConcatLayout concatLayout(const KernelConfig& c, const ConcatenationParams& p) {
  ConcatLayout l;
  const Dims& d = c.outputs[0].dims;
  const int32_t axis = p.axis < 0 ? p.axis + d.nbDims : p.axis;  // validated by inference
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < axis; ++i) outer *= d.d[i];
  for (int32_t i = axis + 1; i < d.nbDims; ++i) inner *= d.d[i];
  l.outer = outer;
  l.rowElems = d.d[axis] * inner;
  l.elemSize = dataTypeSize(c.outputs[0].type);
  int64_t col = 0;
  for (const auto& x : c.inputs) {
    ConcatPart part;
    part.blockElems = x.dims.d[axis] * inner;
    part.colOffset = col;
    col += part.blockElems;
    l.parts.push_back(part);
  }
  return l;
}

class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(ConcatLayout l) : l_(std::move(l)) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    for (size_t k = 0; k < l_.parts.size(); ++k) {
      const ConcatPart& part = l_.parts[k];
      if (part.blockElems == 0 || l_.outer == 0) continue;
      Status s = bySize(l_.elemSize, [&](auto u) {
        using U = decltype(u);
        return launchElements(ConcatOp<U>{static_cast<const U*>(in[k]), static_cast<U*>(out[0]),
                                          part.blockElems, l_.rowElems, part.colOffset},
                              l_.outer * part.blockElems, ctx, "concatenation");
      });
      if (!s) return s;
    }
    return Status::ok();
  }

 private:
  ConcatLayout l_;
};

// The faster concatenation: one cudaMemcpy2DAsync per input (a strided copy engine transfer;
// capturable as a memcpy node). Under emulation the same 2-D copy runs on the host.
class ConcatCopy2DKernel final : public Kernel {
 public:
  explicit ConcatCopy2DKernel(ConcatLayout l) : l_(std::move(l)) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    const size_t e = l_.elemSize;
    const size_t dpitch = static_cast<size_t>(l_.rowElems) * e;
    for (size_t k = 0; k < l_.parts.size(); ++k) {
      const ConcatPart& part = l_.parts[k];
      if (part.blockElems == 0 || l_.outer == 0) continue;
      const size_t width = static_cast<size_t>(part.blockElems) * e;
      auto* dst = static_cast<uint8_t*>(out[0]) + static_cast<size_t>(part.colOffset) * e;
      const auto* src = static_cast<const uint8_t*>(in[k]);
      if (ctx.emulate) {
        for (int64_t r = 0; r < l_.outer; ++r)
          std::memcpy(dst + static_cast<size_t>(r) * dpitch, src + static_cast<size_t>(r) * width,
                      width);
      } else {
        KILN_CUDA_CHECK(cudaMemcpy2DAsync(dst, dpitch, src, width, width,
                                          static_cast<size_t>(l_.outer), cudaMemcpyDeviceToDevice,
                                          static_cast<cudaStream_t>(ctx.stream)));
      }
    }
    return Status::ok();
  }

 private:
  ConcatLayout l_;
};

}  // namespace

std::unique_ptr<Kernel> createConcat(const KernelConfig& c, std::string* whyNot) {
  const ConcatenationParams* p =
      validate<ConcatenationParams>(c, "concatenation", -1, true, whyNot);
  if (!p) return nullptr;
  return std::make_unique<ConcatKernel>(concatLayout(c, *p));
}

std::unique_ptr<Kernel> createConcatCopy2D(const KernelConfig& c, std::string* whyNot) {
  const ConcatenationParams* p =
      validate<ConcatenationParams>(c, "concatenation", -1, true, whyNot);
  if (!p) return nullptr;
  ConcatLayout l = concatLayout(c, *p);
  // cudaMemcpy2D refuses pitches above the device's memPitch (2^31 - 1 on current GPUs).
  const int64_t limit = std::numeric_limits<int32_t>::max();
  if (l.rowElems * static_cast<int64_t>(l.elemSize) > limit) {
    setWhyNot(whyNot, "concatenation: output rows of " +
                          std::to_string(l.rowElems * static_cast<int64_t>(l.elemSize)) +
                          " bytes exceed cudaMemcpy2D's pitch limit");
    return nullptr;
  }
  return std::make_unique<ConcatCopy2DKernel>(std::move(l));
}

// ---------------------------------------------------------------------------------------------
// Gather (ONNX Gather): output [outer, nbIndices, inner] reads data [outer, axisDim, inner] at
// indices[k] (negative counts from the end).
//
// Out-of-range indices. The CPU reference checks every index before writing and fails run().
// On the GPU the indices live in device memory and run() must not synchronize, so it cannot
// return that error. Decision: an element whose index is outside [-axisDim, axisDim) is written
// as all-zero bytes (0, 0.0 or false in every type) and never read out of bounds; the kernel
// also sets a 32-bit error flag in its workspace (reset to 0 by run() with cudaMemsetAsync
// before the launch, so it describes this run only). A caller that synchronizes anyway (a
// debug mode, a test) may read workspace[0] != 0 as "some index was out of range".

namespace {

template <class T, class I>
struct GatherOp {
  const T* data;
  const I* indices;
  T* out;
  int32_t* errorFlag;
  int64_t axisDim, nbIndices, inner;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t r = i % inner;
    const int64_t t = i / inner;
    const int64_t k = t % nbIndices, o = t / nbIndices;
    int64_t v = static_cast<int64_t>(indices[k]);
    if (v < 0) v += axisDim;
    if (v < 0 || v >= axisDim) {
      out[i] = T(0);
      *errorFlag = 1;  // every writer stores the same value: a benign race
      return;
    }
    out[i] = data[(o * axisDim + v) * inner + r];
  }
};

class GatherKernel final : public Kernel {
 public:
  GatherKernel(size_t elemSize, bool wide, int64_t outer, int64_t axisDim, int64_t nbIndices,
               int64_t inner)
      : elemSize_(elemSize),
        wide_(wide),
        outer_(outer),
        axisDim_(axisDim),
        nbIndices_(nbIndices),
        inner_(inner) {}

  size_t workspaceSize() const override { return sizeof(int32_t); }

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    const int64_t count = outer_ * nbIndices_ * inner_;
    if (count == 0) return Status::ok();
    auto* flag = static_cast<int32_t*>(workspace);
    if (ctx.emulate) {
      *flag = 0;
    } else {
      KILN_CUDA_CHECK(
          cudaMemsetAsync(flag, 0, sizeof(int32_t), static_cast<cudaStream_t>(ctx.stream)));
    }
    return bySize(elemSize_, [&](auto u) {
      using U = decltype(u);
      const U* data = static_cast<const U*>(in[0]);
      U* o = static_cast<U*>(out[0]);
      if (wide_)
        return launchElements(GatherOp<U, int64_t>{data, static_cast<const int64_t*>(in[1]), o,
                                                   flag, axisDim_, nbIndices_, inner_},
                              count, ctx, "gather");
      return launchElements(GatherOp<U, int32_t>{data, static_cast<const int32_t*>(in[1]), o, flag,
                                                 axisDim_, nbIndices_, inner_},
                            count, ctx, "gather");
    });
  }

 private:
  size_t elemSize_;
  bool wide_;
  int64_t outer_, axisDim_, nbIndices_, inner_;
};

}  // namespace

std::unique_ptr<Kernel> createGather(const KernelConfig& c, std::string* whyNot) {
  const GatherParams* p = validate<GatherParams>(c, "gather", 2, true, whyNot);
  if (!p) return nullptr;
  const Dims& data = c.inputs[0].dims;
  const int32_t axis = p->axis < 0 ? p->axis + data.nbDims : p->axis;  // validated by inference
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < axis; ++i) outer *= data.d[i];
  for (int32_t i = axis + 1; i < data.nbDims; ++i) inner *= data.d[i];
  return std::make_unique<GatherKernel>(dataTypeSize(c.inputs[0].type),
                                        c.inputs[1].type == DataType::kINT64, outer, data.d[axis],
                                        volume(c.inputs[1].dims), inner);
}

// ---------------------------------------------------------------------------------------------
// Select (ONNX Where): out = condition ? x : y, all three broadcast (numpy rules). Any non-zero
// condition byte is true.

namespace {

struct SelectLayout {
  int32_t rank = 0;
  int64_t outDims[kMaxRank] = {};
  int64_t strides[3][kMaxRank] = {};  // per input, aligned to the output; 0 where broadcast
};

template <class T>
struct SelectOp {
  const uint8_t* cond;
  const T* x;
  const T* y;
  T* out;
  SelectLayout l;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t rem = i, oc = 0, ox = 0, oy = 0;
    for (int32_t k = l.rank - 1; k >= 0; --k) {
      const int64_t j = rem % l.outDims[k];
      rem /= l.outDims[k];
      oc += j * l.strides[0][k];
      ox += j * l.strides[1][k];
      oy += j * l.strides[2][k];
    }
    out[i] = cond[oc] != 0 ? x[ox] : y[oy];
  }
};

class SelectKernel final : public Kernel {
 public:
  SelectKernel(SelectLayout l, int64_t count, size_t elemSize)
      : l_(l), count_(count), elemSize_(elemSize) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    return bySize(elemSize_, [&](auto u) {
      using U = decltype(u);
      return launchElements(
          SelectOp<U>{static_cast<const uint8_t*>(in[0]), static_cast<const U*>(in[1]),
                      static_cast<const U*>(in[2]), static_cast<U*>(out[0]), l_},
          count_, ctx, "select");
    });
  }

 private:
  SelectLayout l_;
  int64_t count_;
  size_t elemSize_;
};

}  // namespace

std::unique_ptr<Kernel> createSelect(const KernelConfig& c, std::string* whyNot) {
  const SelectParams* p = validate<SelectParams>(c, "select", 3, true, whyNot);
  if (!p) return nullptr;
  const Dims& out = c.outputs[0].dims;
  SelectLayout l;
  l.rank = out.nbDims;
  for (int32_t i = 0; i < out.nbDims; ++i) l.outDims[i] = out.d[i];
  for (int t = 0; t < 3; ++t) {
    const Dims& d = c.inputs[static_cast<size_t>(t)].dims;
    int64_t own[kMaxRank] = {};
    rowMajorStrides(d, own);
    const int32_t shift = out.nbDims - d.nbDims;
    for (int32_t i = 0; i < out.nbDims; ++i) {
      const int32_t j = i - shift;
      l.strides[t][i] = (j < 0 || d.d[j] == 1) ? 0 : own[j];
    }
  }
  return std::make_unique<SelectKernel>(l, volume(out), dataTypeSize(c.outputs[0].type));
}

// ---------------------------------------------------------------------------------------------
// Reformat: type conversion and linear <-> channels-last (rank 4) in one pass. Value rules are
// the CPU reformat's:
//   fp32/fp16/bf16 among themselves   round to nearest even
//   float -> integer                  truncate toward zero, saturate, NaN -> 0
//   integer -> narrower integer       saturate
//   integer -> fp32                   round to nearest
//   bool -> anything                  0 or 1 (any non-zero byte is true)
//   anything -> bool                  value != 0 (NaN is true)
// Bool is stored as uint8_t; int8 as int8_t, so the two are distinct storage types here.

namespace {

enum class Kind { kFloat, kInt, kBool };
template <class S>
constexpr Kind kindOf() {
  if constexpr (std::is_same_v<S, float> || std::is_same_v<S, __half> ||
                std::is_same_v<S, __nv_bfloat16>)
    return Kind::kFloat;
  else if constexpr (std::is_same_v<S, uint8_t>)
    return Kind::kBool;
  else
    return Kind::kInt;
}

template <class I>
__host__ __device__ inline I saturateFromFloat(float f) {
  if (f != f) return 0;
  const double d = f;
  // Both bounds are powers of two, exact in double; inside them the truncation is defined.
  const double hi = -static_cast<double>(std::numeric_limits<I>::min());  // max + 1
  if (d >= hi) return std::numeric_limits<I>::max();
  if (d <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  return static_cast<I>(d);
}

template <class I>
__host__ __device__ inline I saturateFromInt(int64_t v) {
  if (v > static_cast<int64_t>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (v < static_cast<int64_t>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  return static_cast<I>(v);
}

template <class S, class D>
__host__ __device__ inline D convert(S v) {
  constexpr Kind ks = kindOf<S>(), kd = kindOf<D>();
  if constexpr (std::is_same_v<S, D>) {
    return v;
  } else if constexpr (kd == Kind::kFloat) {
    float f;
    if constexpr (ks == Kind::kFloat)
      f = toFloat(v);
    else if constexpr (ks == Kind::kInt)
      f = static_cast<float>(v);
    else
      f = v ? 1.f : 0.f;
    return fromFloat<D>(f);
  } else if constexpr (kd == Kind::kBool) {
    if constexpr (ks == Kind::kFloat)
      return toFloat(v) != 0.f ? 1 : 0;
    else
      return v != 0 ? 1 : 0;
  } else {
    if constexpr (ks == Kind::kFloat)
      return saturateFromFloat<D>(toFloat(v));
    else if constexpr (ks == Kind::kInt)
      return saturateFromInt<D>(static_cast<int64_t>(v));
    else
      return v != 0 ? 1 : 0;
  }
}

struct ReformatLayout {
  int64_t count = 0;
  int64_t C = 1, H = 1, W = 1;   // rank 4 when the formats differ
  bool transpose = false;        // formats differ
  bool outChannelsLast = false;  // memory order of the output (when transpose)
};

template <class S, class D>
struct ReformatOp {
  const S* in;
  D* out;
  ReformatLayout l;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t src = i;
    if (l.transpose) {
      // i is the output's memory index; find the logical (n, c, h, w) and the input offset.
      int64_t n, c, h, w;
      if (l.outChannelsLast) {  // output NHWC, input NCHW
        c = i % l.C;
        int64_t t = i / l.C;
        w = t % l.W;
        t /= l.W;
        h = t % l.H;
        n = t / l.H;
      } else {  // output NCHW, input NHWC
        w = i % l.W;
        int64_t t = i / l.W;
        h = t % l.H;
        t /= l.H;
        c = t % l.C;
        n = t / l.C;
      }
      src = offset4(n, c, h, w, l.C, l.H, l.W, !l.outChannelsLast);
    }
    out[i] = convert<S, D>(in[src]);
  }
};

template <class S, class D>
Status runReformat(const ReformatLayout& l, const void* in, void* out, const RunContext& ctx) {
  return launchElements(ReformatOp<S, D>{static_cast<const S*>(in), static_cast<D*>(out), l},
                        l.count, ctx, "reformat");
}

using ReformatFn = Status (*)(const ReformatLayout&, const void*, void*, const RunContext&);

template <class S>
ReformatFn reformatTo(DataType dst) {
  // Only the pairs ops::Reformat::infer allows are instantiated.
  constexpr Kind ks = kindOf<S>();
  switch (dst) {
    case DataType::kFLOAT:
      if constexpr (ks == Kind::kFloat || std::is_same_v<S, int32_t> ||
                    std::is_same_v<S, int64_t> || ks == Kind::kBool)
        return &runReformat<S, float>;
      break;
    case DataType::kHALF:
      if constexpr (ks == Kind::kFloat) return &runReformat<S, __half>;
      break;
    case DataType::kBF16:
      if constexpr (ks == Kind::kFloat) return &runReformat<S, __nv_bfloat16>;
      break;
    case DataType::kINT8:
      if constexpr (ks != Kind::kFloat) return &runReformat<S, int8_t>;
      break;
    case DataType::kINT32:
      if constexpr (ks != Kind::kFloat || std::is_same_v<S, float>) return &runReformat<S, int32_t>;
      break;
    case DataType::kINT64:
      if constexpr (ks != Kind::kFloat || std::is_same_v<S, float>) return &runReformat<S, int64_t>;
      break;
    case DataType::kBOOL:
      if constexpr (ks != Kind::kFloat || std::is_same_v<S, float>) return &runReformat<S, uint8_t>;
      break;
  }
  return nullptr;
}

ReformatFn reformatFor(DataType src, DataType dst) {
  switch (src) {
    case DataType::kFLOAT:
      return reformatTo<float>(dst);
    case DataType::kHALF:
      return reformatTo<__half>(dst);
    case DataType::kBF16:
      return reformatTo<__nv_bfloat16>(dst);
    case DataType::kINT8:
      return reformatTo<int8_t>(dst);
    case DataType::kINT32:
      return reformatTo<int32_t>(dst);
    case DataType::kINT64:
      return reformatTo<int64_t>(dst);
    case DataType::kBOOL:
      return reformatTo<uint8_t>(dst);
  }
  return nullptr;
}

class ReformatKernel final : public Kernel {
 public:
  ReformatKernel(ReformatFn fn, ReformatLayout l) : fn_(fn), l_(l) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    return fn_(l_, in[0], out[0], ctx);
  }

 private:
  ReformatFn fn_;
  ReformatLayout l_;
};

}  // namespace

std::unique_ptr<Kernel> createReformat(const KernelConfig& c, std::string* whyNot) {
  const ReformatParams* p = validate<ReformatParams>(c, "reformat", 1, false, whyNot);
  if (!p) return nullptr;
  const PluginTensorDesc& in = c.inputs[0];
  const PluginTensorDesc& out = c.outputs[0];
  if (out.format != p->outputFormat) {
    setWhyNot(whyNot, std::string("reformat: output tensor is ") + formatName(out.format) +
                          " but the layer makes " + formatName(p->outputFormat));
    return nullptr;
  }
  const ReformatFn fn = reformatFor(in.type, out.type);
  if (!fn) {  // inference has validated the pair; kept so a new enum value cannot crash here
    setWhyNot(whyNot, std::string("reformat: no kernel for ") + dataTypeName(in.type) + " to " +
                          dataTypeName(out.type));
    return nullptr;
  }
  ReformatLayout l;
  l.count = volume(in.dims);
  if (in.format != out.format) {  // both valid, so one is channels-last: rank 4 (validated)
    l.transpose = true;
    l.outChannelsLast = out.format == TensorFormat::kCHANNELS_LAST;
    l.C = in.dims.d[1];
    l.H = in.dims.d[2];
    l.W = in.dims.d[3];
  }
  return std::make_unique<ReformatKernel>(fn, l);
}

}  // namespace kiln::cuda::dm
