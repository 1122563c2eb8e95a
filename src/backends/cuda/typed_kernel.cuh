// The kernel of most of kiln's own CUDA tactics: a launch that depends only on the storage type T
// of the layer's elements. The tactic writes that launch as a lambda when it makes the kernel,
//   return makeTypedKernel<FloatTypes>(type, [g](auto tag, const void* const* in, void* const* out,
//                                                const RunContext& ctx) {
//     using T = decltype(tag);
//     return launchElements(MyOp<T>{static_cast<const T*>(in[0]), static_cast<T*>(out[0]), g},
//                           count, ctx, "my_op");
//   });
// holding by value whatever it prepared (geometry, counts); run() picks T from `type` and calls it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "backends/cuda/elements.cuh"
#include "core/element_types.h"

namespace kiln::cuda {

// The element types of kiln's CUDA kernels (core/element_types.h).
using FloatTypes = ElementTypes<Stored<DataType::kFLOAT, float>, Stored<DataType::kHALF, __half>,
                                Stored<DataType::kBF16, __nv_bfloat16>>;
using FloatOrIntTypes =
    ElementTypes<Stored<DataType::kFLOAT, float>, Stored<DataType::kHALF, __half>,
                 Stored<DataType::kBF16, __nv_bfloat16>, Stored<DataType::kINT32, int32_t>,
                 Stored<DataType::kINT64, int64_t>>;
// Bool is stored as uint8_t.
using FloatIntOrBoolTypes =
    ElementTypes<Stored<DataType::kFLOAT, float>, Stored<DataType::kHALF, __half>,
                 Stored<DataType::kBF16, __nv_bfloat16>, Stored<DataType::kINT32, int32_t>,
                 Stored<DataType::kINT64, int64_t>, Stored<DataType::kBOOL, uint8_t>>;
// Every DataType.
using AllTypes = ElementTypes<Stored<DataType::kFLOAT, float>, Stored<DataType::kHALF, __half>,
                              Stored<DataType::kBF16, __nv_bfloat16>,
                              Stored<DataType::kINT8, int8_t>, Stored<DataType::kINT32, int32_t>,
                              Stored<DataType::kINT64, int64_t>, Stored<DataType::kBOOL, uint8_t>>;

// launch(T{}) -> Status for the storage type T of `type`; a type outside Types (one that
// validation refused before) fails.
template <class Types, class Launch>
Status launchTyped(DataType type, Launch&& launch) {
  Status s = Status::ok();
  if (!Types::dispatch(type, [&](auto t) { s = launch(t); }))
    return internalError(std::string("kiln's CUDA kernels: unsupported type ") +
                         dataTypeName(type));
  return s;
}

// launch(T{}, in, out, ctx) -> Status enqueues the layer for storage type T.
template <class Types, class Launch>
class TypedKernel final : public Kernel {
 public:
  TypedKernel(DataType type, Launch launch) : type_(type), launch_(std::move(launch)) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    return launchTyped<Types>(type_, [&](auto t) { return launch_(t, in, out, ctx); });
  }

 private:
  DataType type_;
  Launch launch_;
};

template <class Types, class Launch>
std::unique_ptr<Kernel> makeTypedKernel(DataType type, Launch launch) {
  return std::make_unique<TypedKernel<Types, Launch>>(type, std::move(launch));
}

}  // namespace kiln::cuda
