// The shape and type rule of MatrixMultiply (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount MatrixMultiply::inputs = {2, 2, "A, B"};

Status MatrixMultiply::shapeRule(const MatrixMultiplyParams& p, const Shapes& in, Shapes& out) {
  constexpr const char* kLayer = "matrix multiply";
  KILN_RETURN_IF_ERROR(shape::checkFloatInputs(kLayer, in));
  const Dims& a = in[0].dims;
  const Dims& b = in[1].dims;
  for (int i = 0; i < 2; ++i)
    if (in[i].dims.nbDims < 2)
      return invalidArgument(std::string(kLayer) + ": input " + std::to_string(i) + " is " +
                             dimsString(in[i].dims) +
                             "; both inputs need rank >= 2 (reshape a vector to [1,K] or [K,1])");
  int64_t m = 0, ka = 0, kb = 0, n = 0;
  shape::matrixRowsCols(a, p.transposeA, &m, &ka);
  shape::matrixRowsCols(b, p.transposeB, &kb, &n);
  if (ka != kb)
    return invalidArgument(std::string(kLayer) + ": inner dims differ: op(A) of " + dimsString(a) +
                           " is [" + shape::str(m) + "," + shape::str(ka) + "], op(B) of " +
                           dimsString(b) + " is [" + shape::str(kb) + "," + shape::str(n) + "]");
  // Leading (batch) dims broadcast in numpy's rules, aligned from the right.
  const int32_t batchA = a.nbDims - 2, batchB = b.nbDims - 2;
  const int32_t batch = batchA > batchB ? batchA : batchB;
  TensorShape y;
  y.type = in[0].type;
  y.dims.nbDims = batch + 2;
  for (int32_t i = 0; i < batch; ++i) {
    const int32_t ia = i - (batch - batchA), ib = i - (batch - batchB);
    const int64_t da = ia >= 0 ? a.d[ia] : 1, db = ib >= 0 ? b.d[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return invalidArgument(std::string(kLayer) + ": batch dims of " + dimsString(a) + " and " +
                             dimsString(b) + " do not broadcast (" + shape::str(da) + " vs " +
                             shape::str(db) + ")");
    y.dims.d[i] = da == 1 ? db : da;
  }
  y.dims.d[batch] = m;
  y.dims.d[batch + 1] = n;
  return shape::setOutput(kLayer, y.dims, y.type, out);
}

bool MatrixMultiply::computeTypes(const MatrixMultiplyParams&, std::vector<DataType>& types,
                                  std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
