#include "builder/passes/constant_eval.h"

#include "backends/backend.h"
#include "core/aligned_buffer.h"
#include "core/plan.h"

namespace kiln::passes {

Status evaluateOnCpu(const GraphNode& node, const std::vector<HostTensor>& inputs,
                     std::vector<HostTensor>& outputs) {
  if (node.type == LayerType::kPLUGIN || node.type == LayerType::kCONSTANT)
    return invalidArgument("only built-in layers are evaluated at build time");
  KernelConfig config;
  config.type = node.type;
  config.params = node.params;
  std::vector<const void*> in;
  for (const HostTensor& t : inputs) {
    if (!t.bytes) return invalidArgument("an input has no values");
    config.inputs.push_back(
        PluginTensorDesc{t.shape.dims, t.shape.type, TensorFormat::kLINEAR, DeviceKind::kCPU});
    config.constantInputs.push_back(t.bytes->data());
    in.push_back(t.bytes->data());
  }
  for (const HostTensor& t : outputs) {
    config.outputs.push_back(
        PluginTensorDesc{t.shape.dims, t.shape.type, TensorFormat::kLINEAR, DeviceKind::kCPU});
  }

  KernelPtr kernel;
  std::string why;  // the last one's: the reference, which takes the most
  for (const Tactic& tactic : cpuBackend().tactics(node.type)) {
    why.clear();
    if ((kernel = tactic.create(config, &why))) break;
  }
  if (!kernel) return unsupported("no CPU tactic takes it" + (why.empty() ? "" : ": " + why));

  std::vector<std::shared_ptr<std::vector<uint8_t>>> values;
  std::vector<void*> out;
  for (const HostTensor& t : outputs) {
    const int64_t bytes = plan::tensorBytes(t.shape.dims, t.shape.type);
    if (bytes < 0) return invalidArgument("an output has invalid dims");
    values.push_back(std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(bytes)));
    out.push_back(values.back()->data());
  }
  AlignedBuffer workspace(kernel->workspaceSize());
  KILN_RETURN_IF_ERROR(kernel->run(in.data(), out.data(), workspace.data(), RunContext{}));
  for (size_t o = 0; o < outputs.size(); ++o) outputs[o].bytes = std::move(values[o]);
  return Status::ok();
}

}  // namespace kiln::passes
