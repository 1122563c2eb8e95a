// The CUDA backend's data-movement family (shuffle, concatenation, slice, padding, tile, expand,
// gather, reformat, select, resize, roi_align): the tactic factories behind
// dataMovementTactics() and the validation they share. No CUDA header here: the tactic list
// (data_movement_tactics.cpp) is plain C++.
//
// Validation follows the CPU backend (backends/cpu/light_kernel_util.h): a tactic makes a kernel
// only when the configuration is exactly what shape inference says, so run() trusts every dim
// and never reads or writes out of bounds even when a plan was corrupted.
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "backends/config_checks.h"
#include "backends/cuda/kernel.h"
#include "ops/op_table.h"

namespace kiln::cuda::dm {

inline void setWhyNot(std::string* whyNot, std::string message) {
  if (whyNot) *whyNot = std::move(message);
}

// "[2,3,4]": dims in messages.
using kiln::dimsString;

// The common part of validate(), not templated.
bool validateCommon(const KernelConfig& c, const char* layer, int nbInputs, bool linearOnly,
                    std::string* whyNot);

// The layer's params when the configuration is consistent: params alternative P, tensors on
// the CUDA device, valid formats (channels-last only at rank 4), `nbInputs` inputs (-1: any
// number), one output, and outputs exactly as inferLayerOutputs computes them. `linearOnly`:
// decline any channels-last tensor. Otherwise nullptr with *whyNot set.
template <class P>
const P* validate(const KernelConfig& c, const char* layer, int nbInputs, bool linearOnly,
                  std::string* whyNot) {
  const P* p = std::get_if<P>(&c.params);
  if (!p) {
    setWhyNot(whyNot, std::string(layer) + ": the configuration holds another layer's params");
    return nullptr;
  }
  return validateCommon(c, layer, nbInputs, linearOnly, whyNot) ? p : nullptr;
}

// Tactic factories (data_movement.cu, data_movement_resize.cu).
std::unique_ptr<Kernel> createShuffle(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createConcatCopy2D(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createConcat(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createSlice(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createPadding(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createTile(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createExpand(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createGather(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createSelect(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createReformat(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createResize(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createRoiAlign(const KernelConfig& c, std::string* whyNot);

}  // namespace kiln::cuda::dm
