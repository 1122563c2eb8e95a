// See epilogue_chain.h.
#include "builder/passes/epilogue_chain.h"

#include <cstring>
#include <memory>

#include "builder/passes/chain_fusion.h"

namespace kiln::passes {
bool isActivationStep(const GraphEditor& edit, int32_t n) {
  const GraphNode& node = edit.node(n);
  if (node.type != LayerType::kACTIVATION || node.inputs.size() != 1) return false;
  const auto* a = std::get_if<ActivationParams>(&node.params);
  return a && a->type != ActivationType::kNOT;
}

bool couldFollow(const GraphEditor& edit, int32_t n, bool addAllowed) {
  return (addAllowed && isElementwise(edit, n, ElementwiseOp::kADD)) || isActivationStep(edit, n);
}

EpilogueSteps extendEpilogue(const GraphEditor& edit, int32_t head, bool headHasBias, IsBias isBias,
                             std::string& stop) {
  enum Stage { kBias, kResidual, kActivation, kDone };
  EpilogueSteps s;
  int stage = headHasBias ? kResidual : kBias;
  int32_t last = head;
  while (stage != kDone) {
    const int32_t t = edit.node(last).outputs[0];
    const GraphTensor& out = edit.tensor(t);
    const auto& readers = edit.consumers(t);
    if (readers.empty()) return s;
    if (out.isOutput || readers.size() != 1) {
      for (int32_t r : readers)
        if (couldFollow(edit, r, stage != kActivation)) {
          stop = "'" + out.name + "' is " +
                 (out.isOutput ? "a network output" : "read by more than one layer");
          break;
        }
      return s;
    }
    const int32_t next = readers[0];
    if (isElementwise(edit, next, ElementwiseOp::kADD)) {
      const auto& in = edit.node(next).inputs;
      const int32_t other = in[0] == t ? in[1] : in[0];
      const GraphTensor& o = edit.tensor(other);
      const TensorShape& sum = edit.tensor(edit.node(next).outputs[0]).shape;
      // x + x is no step: the fused layer would read its own intermediate.
      if (other == t || sum.dims != out.shape.dims || sum.type != out.shape.type ||
          o.shape.type != out.shape.type)
        return s;
      if (stage == kBias && o.shape.dims != out.shape.dims && isBias(o, out.shape.dims)) {
        s.bias = other;
        stage = kResidual;
      } else if (stage <= kResidual && o.shape.dims == out.shape.dims) {
        s.residual = other;
        stage = kActivation;
      } else {
        return s;
      }
    } else if (isActivationStep(edit, next)) {
      s.hasActivation = true;
      s.activation = std::get<ActivationParams>(edit.node(next).params);
      stage = kDone;
    } else {
      return s;
    }
    s.tail.push_back(next);
    last = next;
  }
  return s;
}

int32_t biasVector(GraphEditor& edit, int32_t bias, int64_t n) {
  const GraphTensor& b = edit.tensor(bias);
  if (b.shape.dims == makeDims({n})) return bias;
  std::shared_ptr<const std::vector<uint8_t>> bytes = b.constant;
  if (volume(b.shape.dims) != n) {
    const size_t size = dataTypeSize(b.shape.type);
    auto repeated = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(n) * size);
    for (int64_t j = 0; j < n; ++j)
      std::memcpy(repeated->data() + static_cast<size_t>(j) * size, b.constant->data(), size);
    bytes = std::move(repeated);
  }
  return edit.addConstant(b.name + "_bias", TensorShape{makeDims({n}), b.shape.type},
                          std::move(bytes));
}

}  // namespace kiln::passes
