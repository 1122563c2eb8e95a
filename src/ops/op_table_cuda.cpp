// The CUDA half of the op table: compiled only in builds with the CUDA backend (its name ends in
// _cuda.cpp), which is the only code that asks for CUDA tactics.
#include "ops/op.h"
#include "ops/op_table.h"

namespace kiln::ops {

std::span<const Tactic> cudaTactics(LayerType type) {
  switch (type) {
#define KILN_CUDA_TACTICS_CASE(ENUM, VALUE, NAME) \
  case LayerType::k##ENUM:                        \
    return NAME::cudaTactics();
    KILN_BUILTIN_OPS(KILN_CUDA_TACTICS_CASE)
#undef KILN_CUDA_TACTICS_CASE
    case LayerType::kCONSTANT:
    case LayerType::kPLUGIN:
      break;
  }
  return {};
}

}  // namespace kiln::ops
