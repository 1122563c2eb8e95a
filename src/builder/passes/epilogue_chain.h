// What the product fusions share (linear_fusion.cpp, conv_fusion.cpp): the layers exporters write
// after a matrix product or a convolution for its epilogue, walked forward from the head,
//   bias      + b            a constant that isBias accepts, either operand order (only while the
//                            head has no bias of its own)
//   residual  + r            any tensor of exactly the output's shape and type
//   act       Activation     any activation with a float form
// in that order, each step optional; and the bias constant as the fused layer takes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "builder/passes/graph_edit.h"

namespace kiln::passes {

// The steps found after a head, in order, and what they add.
struct EpilogueSteps {
  std::vector<int32_t> tail;  // the layers taken; the last one becomes the fused layer
  int32_t bias = -1, residual = -1;
  bool hasActivation = false;
  ActivationParams activation;
};

// Sets the residual and activation fields of a fused layer's params P (LinearParams,
// ConvolutionParams: the same names) from the steps found.
template <class P>
void setEpilogueFields(const EpilogueSteps& s, P& p) {
  p.hasResidual = s.residual >= 0;
  p.hasActivation = s.hasActivation;
  p.activation = s.activation.type;
  p.activationAlpha = s.activation.alpha;
  p.activationBeta = s.activation.beta;
}

// Whether constant c, added to the head's output of dims `out`, is the head's kind of bias.
using IsBias = bool (*)(const GraphTensor& c, const Dims& out);

// Walks from `head`'s output while the next layer is the next step (no bias step when
// `headHasBias`); `stop` says why it stopped before a layer that could have been one (its input
// read by another layer too, or a network output), empty when none could.
EpilogueSteps extendEpilogue(const GraphEditor& edit, int32_t head, bool headHasBias, IsBias isBias,
                             std::string& stop);

// Whether layer n is an activation the fused layers can apply (any with a float form).
bool isActivationStep(const GraphEditor& edit, int32_t n);

// Whether layer n could be the next step of a chain: an activation, or an add when `addAllowed`
// (for the log: a stop that loses nothing is not worth a line).
bool couldFollow(const GraphEditor& edit, int32_t n, bool addAllowed = true);

// The bias constant as a fused layer takes it, [n]: `bias` itself when it is [n], else a new
// constant over the same bytes (n values) or the one value repeated n times.
int32_t biasVector(GraphEditor& edit, int32_t bias, int64_t n);

}  // namespace kiln::passes
