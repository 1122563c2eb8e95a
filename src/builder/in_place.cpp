#include "builder/in_place.h"

#include "ops/op_table.h"

namespace kiln {

int32_t aliasResidualsInPlace(const plan::Plan& plan, const Backend& backend,
                              std::vector<int32_t>& home) {
  // The last step that reads each home's bytes, through any of its names.
  std::vector<int32_t> lastRead(plan.tensors.size(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (int32_t i : plan.steps[s].inputs) lastRead[size_t(home[size_t(i)])] = int32_t(s);
  int32_t placed = 0;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const plan::Step& step = plan.steps[s];
    if (step.outputs.size() != 1) continue;
    const int32_t r = ops::residualInput(step.type, step.params, step.inputs.size());
    if (r < 0 || size_t(r) >= step.inputs.size()) continue;
    const Tactic* tactic = ops::findTactic(backend.tactics(step.type), step.tactic);
    if (!tactic || !tactic->residualInPlace) continue;
    const int32_t in = step.inputs[size_t(r)], out = step.outputs[0];
    const int32_t from = home[size_t(in)];
    const plan::Tensor &residual = plan.tensors[size_t(in)], &output = plan.tensors[size_t(out)];
    const plan::Tensor& bytes = plan.tensors[size_t(from)];
    if (home[size_t(out)] != out || bytes.kind != plan::TensorKind::kACTIVATION ||
        output.kind != plan::TensorKind::kACTIVATION || residual.type != output.type ||
        residual.format != output.format || residual.dims != output.dims ||
        plan::tensorBytes(bytes.dims, bytes.type) != plan::tensorBytes(output.dims, output.type))
      continue;
    if (lastRead[size_t(from)] != int32_t(s)) continue;  // read again later
    bool shared = false;                                 // another input in the same bytes
    for (size_t i = 0; i < step.inputs.size(); ++i)
      shared = shared || (i != size_t(r) && home[size_t(step.inputs[i])] == from);
    if (shared) continue;
    // The output and every name that aliases it (reshapes of it) move to the residual's bytes,
    // which are then read until the output's last reader.
    for (size_t t = 0; t < home.size(); ++t)
      if (home[t] == out) home[t] = from;
    lastRead[size_t(from)] = std::max(lastRead[size_t(from)], lastRead[size_t(out)]);
    ++placed;
  }
  return placed;
}

}  // namespace kiln
