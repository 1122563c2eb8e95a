// Tactic lists of the CUDA math family, faster tactics first, the plain per-element reference
// last (oneDNN order). Kernels: math_elementwise.cu (elementwise, activation) and math_reduce.cu
// (softmax, reduce, instance normalization, LRN); checks in math_common.h.
#include "backends/cuda/math_common.h"

namespace kiln::cuda {
namespace {

constexpr Tactic kElementwise[] = {
    {"same_shape", &math::createElementwiseSameShape},
    {"scalar_broadcast", &math::createElementwiseScalar},
    {"reference", &math::createElementwiseBroadcast},
};
constexpr Tactic kActivation[] = {
    {"reference", &math::createActivation},
};
constexpr Tactic kSoftmax[] = {
    {"contiguous_rows", &math::createSoftmaxRows},
    {"reference", &math::createSoftmaxReference},
};
constexpr Tactic kReduce[] = {
    {"contiguous_rows", &math::createReduceRows},
    {"reference", &math::createReduceReference},
};
constexpr Tactic kNormalization[] = {
    {"block_per_slice", &math::createInstanceNormSlices},
    {"reference", &math::createInstanceNormReference},
};
constexpr Tactic kLrn[] = {
    {"reference", &math::createLrnReference},
};

}  // namespace

std::span<const Tactic> mathTactics(LayerType type) {
  switch (type) {
    case LayerType::kELEMENTWISE:
      return kElementwise;
    case LayerType::kACTIVATION:
      return kActivation;
    case LayerType::kSOFTMAX:
      return kSoftmax;
    case LayerType::kREDUCE:
      return kReduce;
    case LayerType::kNORMALIZATION:
      return kNormalization;
    case LayerType::kLRN:
      return kLrn;
    default:
      return {};
  }
}

}  // namespace kiln::cuda
