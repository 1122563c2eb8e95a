// The shape and type rule of Gemm (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Gemm::inputs = {2, 3, "A, B[, C]"};

Status Gemm::shapeRule(const GemmParams& p, const Shapes& in, Shapes& out) {
  constexpr const char* kLayer = "gemm";
  KILN_RETURN_IF_ERROR(shape::checkFloatInputs(kLayer, in));
  for (int i = 0; i < 2; ++i)
    if (in[i].dims.nbDims != 2)
      return invalidArgument(std::string(kLayer) + ": input " + std::to_string(i) + " (" +
                             (i == 0 ? "A" : "B") + ") must be rank 2, got " +
                             dimsString(in[i].dims));
  int64_t m = 0, ka = 0, kb = 0, n = 0;
  shape::matrixRowsCols(in[0].dims, p.transposeA, &m, &ka);
  shape::matrixRowsCols(in[1].dims, p.transposeB, &kb, &n);
  if (ka != kb)
    return invalidArgument(std::string(kLayer) + ": inner dims differ: op(A) of " +
                           dimsString(in[0].dims) + " is [" + shape::str(m) + "," + shape::str(ka) +
                           "], op(B) of " + dimsString(in[1].dims) + " is [" + shape::str(kb) +
                           "," + shape::str(n) + "]");
  if (in.size() == 3) {
    // C broadcasts one way to [M, N]: its dims align from the right, each 1 or equal.
    const Dims& c = in[2].dims;
    const int64_t target[2] = {m, n};
    bool ok = c.nbDims <= 2;
    for (int32_t i = 0; ok && i < c.nbDims; ++i) {
      const int64_t want = target[2 - c.nbDims + i];
      ok = c.d[i] == 1 || c.d[i] == want;
    }
    if (!ok)
      return invalidArgument(std::string(kLayer) + ": input 2 (C) " + dimsString(c) +
                             " does not broadcast to the output [" + shape::str(m) + "," +
                             shape::str(n) + "]");
  }
  TensorShape y;
  y.type = in[0].type;
  y.dims = makeDims({m, n});
  return shape::setOutput(kLayer, y.dims, y.type, out);
}

bool Gemm::computeTypes(const GemmParams&, std::vector<DataType>& types, std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
