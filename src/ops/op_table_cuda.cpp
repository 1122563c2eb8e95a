// The CUDA half of the op table: compiled only in builds with the CUDA backend (its name ends in
// _cuda.cpp), which is the only code that asks for CUDA tactics.
#include "ops/op.h"
#include "ops/op_table.h"

namespace kiln::ops {

std::span<const Tactic> cudaTactics(LayerType type) {
  return withOp(
      type, [](auto op) { return decltype(op)::cudaTactics(); },
      [] { return std::span<const Tactic>(); });
}

}  // namespace kiln::ops
