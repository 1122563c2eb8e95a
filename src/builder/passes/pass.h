// A builder pass is a function over a mutable Graph: it rewrites what it knows how to improve
// and says what it changed (and what it looked at but left alone, and why) in its context.
// Passes run on the builder's own copy of the network's graph, before lowering (pipeline.h), so
// a network from the C++ API and the same network from ONNX get the same plan.
//
// Between passes a graph is compact (no removed nodes) and topologically ordered; a pass edits
// through GraphEditor (graph_edit.h) and compacts once at its end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "builder/graph.h"
#include "kiln/status.h"

namespace kiln::passes {

struct PassLimits {
  // A computed constant (constant folding) larger than either is left to the plan to compute:
  // a tiny model can ask for any size, and the plan would carry it as weights.
  int64_t maxFoldElements = int64_t(1) << 26;
  uint64_t maxFoldBytes = uint64_t(256) << 20;
};

class PassContext {
 public:
  explicit PassContext(PassLimits limits = {}, DeviceKind target = DeviceKind::kCPU)
      : limits_(limits), target_(target) {}
  const PassLimits& limits() const { return limits_; }
  // The device the build is for: most passes rewrite the same on every target; one whose
  // kernels differ by target may decide per target (attention_fusion does).
  DeviceKind target() const { return target_; }

  // One change, naming the layers involved: "folded 'bn_mul' (Elementwise mul) into ...".
  void changed(std::string line) { changes_.push_back(std::move(line)); }
  // A candidate left alone, with the reason: "left 'x' (Gather) alone: ...".
  void declined(std::string line) { declines_.push_back(std::move(line)); }

  const std::vector<std::string>& changes() const { return changes_; }
  const std::vector<std::string>& declines() const { return declines_; }

 private:
  PassLimits limits_;
  DeviceKind target_;
  std::vector<std::string> changes_, declines_;
};

using PassFunction = Status (*)(Graph& graph, PassContext& context);

struct Pass {
  const char* name;  // as the verbose log shows it: "pass constant_folding: ..."
  PassFunction run;
};

// One per file of this folder.
Status eliminateIdentities(Graph& graph, PassContext& context);    // identity_elimination.cpp
Status foldConstants(Graph& graph, PassContext& context);          // constant_folding.cpp
Status foldAffine(Graph& graph, PassContext& context);             // affine_folding.cpp
Status eliminateDeadLayers(Graph& graph, PassContext& context);    // dead_layer_elimination.cpp
Status fuseGelu(Graph& graph, PassContext& context);               // gelu_fusion.cpp
Status fuseSilu(Graph& graph, PassContext& context);               // silu_fusion.cpp
Status fuseLayerNorm(Graph& graph, PassContext& context);          // layer_norm_fusion.cpp
Status fuseAttention(Graph& graph, PassContext& context);          // attention_fusion.cpp
Status layOutAttention(Graph& graph, PassContext& context);        // attention_layout.cpp
Status fuseLinear(Graph& graph, PassContext& context);             // linear_fusion.cpp
Status moveTransposes(Graph& graph, PassContext& context);         // transpose_motion.cpp
Status fuseConvolution(Graph& graph, PassContext& context);        // conv_fusion.cpp
Status fuseElementwiseChains(Graph& graph, PassContext& context);  // elementwise_chain_fusion.cpp

}  // namespace kiln::passes
