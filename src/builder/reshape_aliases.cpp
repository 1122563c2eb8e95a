#include "builder/reshape_aliases.h"

#include <variant>

#include "ops/shuffle/shuffle_semantics.h"

namespace kiln {
namespace {

bool isLinearActivation(const plan::Tensor& t) {
  return t.kind == plan::TensorKind::kACTIVATION && t.format == TensorFormat::kLINEAR;
}

// A step that only renames bytes: a Shuffle from one linear activation to another of its type
// whose plan makes no permuted copy.
bool movesNoBytes(const plan::Plan& plan, const plan::Step& s) {
  // (A second input only gives reshape dims.)
  if (s.type != LayerType::kSHUFFLE || s.inputs.empty() || s.inputs.size() > 2 ||
      s.outputs.size() != 1)
    return false;
  const auto* p = std::get_if<ShuffleParams>(&s.params);
  if (!p) return false;
  const plan::Tensor& in = plan.tensors[static_cast<size_t>(s.inputs[0])];
  const plan::Tensor& out = plan.tensors[static_cast<size_t>(s.outputs[0])];
  if (!isLinearActivation(in) || !isLinearActivation(out) || in.type != out.type) return false;
  const ops::shuffle::Plan copy = ops::shuffle::plan(*p, in.dims, out.dims, dataTypeSize(in.type));
  return !copy.first && !copy.second;
}

}  // namespace

std::vector<int32_t> aliasReshapes(plan::Plan& plan) {
  std::vector<int32_t> home(plan.tensors.size());
  for (size_t t = 0; t < home.size(); ++t) home[t] = static_cast<int32_t>(t);
  for (plan::Step& s : plan.steps) {
    if (!movesNoBytes(plan, s)) continue;
    // Steps come in execution order, so the input's home is already final.
    home[static_cast<size_t>(s.outputs[0])] = home[static_cast<size_t>(s.inputs[0])];
    // The reference is the tactic that is sure to do nothing when both are one address (the
    // only one a plain reshape has on either backend, as it happens).
    s.tactic = "reference";
    s.workspaceBytes = 0;
  }
  return home;
}

}  // namespace kiln
