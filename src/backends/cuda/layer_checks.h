// The configuration checks of kiln's own CUDA kernels for the layers that move or resample data
// (shuffle, concatenation, slice, padding, tile, expand, gather, select, reformat, resize,
// roi_align). No CUDA header here, so plain C++ may include it.
//
// As on the CPU (backends/cpu/tactic_checks.h), a tactic makes a kernel only when the
// configuration is exactly what shape inference says, so run() trusts every dim and never reads
// or writes out of bounds even when a plan was corrupted.
#pragma once

#include <string>
#include <variant>

#include "backends/config_checks.h"
#include "backends/cuda/kernel.h"

namespace kiln::cuda {

inline void setWhyNot(std::string* whyNot, std::string message) {
  if (whyNot) *whyNot = std::move(message);
}

// The common part of validate(), not templated.
bool validateLayer(const KernelConfig& c, const char* layer, int nbInputs, bool linearOnly,
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
  return validateLayer(c, layer, nbInputs, linearOnly, whyNot) ? p : nullptr;
}

}  // namespace kiln::cuda
