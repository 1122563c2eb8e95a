#include "builder/passes/pipeline.h"

namespace kiln::passes {

std::span<const Pass> defaultPipeline() {
  // A plain ordered table: later passes (fusions) join it here.
  //  - identities go first, so that the folds see through the layers that do nothing;
  //  - constant folding before affine folding, so that per-channel constants computed from
  //    other constants (a BatchNorm written out in layers) are plain constants by then;
  //  - fusions after the folds, which may have turned their constants into plain scalars;
  //  - linear fusion after the others: GELU and SiLU fusion make the activations it (and
  //    convolution fusion) takes in, and the
  //    attention chain's products must still be MatMuls when attention fusion looks for them;
  //  - transpose motion after linear fusion, whose Linears it moves leading-axis transposes
  //    across, then linear fusion once more (linear_residual_fusion), for the residual adds that
  //    the moved transposes had kept from the Linears' epilogues;
  //  - convolution fusion after affine folding, which gives a convolution its BatchNorm as a bias;
  //  - elementwise chain fusion after the product fusions, which take the steps that belong in an
  //    epilogue first;
  //  - attention layout after the fusions: it reads the Attention layers and the products that
  //    feed them as those passes left them, and leaves the data movement it makes views of to
  //  - dead-layer elimination, last: it also removes the constants the folds left unread.
  static const Pass passes[] = {
      {"identity_elimination", eliminateIdentities},
      {"constant_folding", foldConstants},
      {"affine_folding", foldAffine},
      {"gelu_fusion", fuseGelu},
      {"silu_fusion", fuseSilu},
      {"layer_norm_fusion", fuseLayerNorm},
      {"attention_fusion", fuseAttention},
      {"linear_fusion", fuseLinear},
      {"transpose_motion", moveTransposes},
      {"linear_residual_fusion", fuseLinear},
      {"conv_fusion", fuseConvolution},
      {"elementwise_chain_fusion", fuseElementwiseChains},
      {"attention_layout", layOutAttention},
      {"dead_layer_elimination", eliminateDeadLayers},
  };
  return passes;
}

Status runPipeline(Graph& graph, std::span<const Pass> passes, const PassLimits& limits,
                   std::vector<std::string>* log, DeviceKind target) {
  for (const Pass& pass : passes) {
    PassContext context(limits, target);
    Status s = pass.run(graph, context);
    if (!s) return s.withContext(std::string("builder pass ") + pass.name);
    if (!log) continue;
    const std::string prefix = std::string("pass ") + pass.name + ": ";
    if (context.changes().empty()) log->push_back(prefix + "no change");
    for (const std::string& line : context.changes()) log->push_back(prefix + line);
    for (const std::string& line : context.declines()) log->push_back(prefix + line);
  }
  return Status::ok();
}

}  // namespace kiln::passes
