// Shape inference for the matrix products: MatrixMultiply (numpy matmul) and Gemm (ONNX Gemm).
#include <cstdint>
#include <string>
#include <vector>

#include "core/light_infer_util.h"
#include "core/shape_inference.h"

namespace kiln {
namespace {

using light::dimsString;

std::string str(int64_t v) { return std::to_string(v); }

Status checkFloatInputs(const char* layer, const std::vector<TensorShape>& in) {
  for (size_t i = 0; i < in.size(); ++i)
    if (!light::isFloatType(in[i].type))
      return invalidArgument(std::string(layer) + ": input " + std::to_string(i) + " is " +
                             dataTypeName(in[i].type) + "; only fp32, fp16 and bf16 are supported");
  return Status::ok();
}

// Rows and columns of op(X) for a matrix (or a stack of matrices in the last two dims).
void opRowsCols(const Dims& d, bool trans, int64_t* rows, int64_t* cols) {
  const int64_t r = d.d[d.nbDims - 2], c = d.d[d.nbDims - 1];
  *rows = trans ? c : r;
  *cols = trans ? r : c;
}

}  // namespace

Status inferMatrixMultiply(const MatrixMultiplyParams& p, const std::vector<TensorShape>& in,
                           std::vector<TensorShape>& out) {
  constexpr const char* kLayer = "matrix multiply";
  KILN_RETURN_IF_ERROR(light::checkInputCount(kLayer, in, 2));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(kLayer, in));
  KILN_RETURN_IF_ERROR(checkFloatInputs(kLayer, in));
  const Dims& a = in[0].dims;
  const Dims& b = in[1].dims;
  for (int i = 0; i < 2; ++i)
    if (in[i].dims.nbDims < 2)
      return invalidArgument(std::string(kLayer) + ": input " + std::to_string(i) + " is " +
                             dimsString(in[i].dims) +
                             "; both inputs need rank >= 2 (reshape a vector to [1,K] or [K,1])");
  int64_t m = 0, ka = 0, kb = 0, n = 0;
  opRowsCols(a, p.transposeA, &m, &ka);
  opRowsCols(b, p.transposeB, &kb, &n);
  if (ka != kb)
    return invalidArgument(std::string(kLayer) + ": inner dims differ: op(A) of " + dimsString(a) +
                           " is [" + str(m) + "," + str(ka) + "], op(B) of " + dimsString(b) +
                           " is [" + str(kb) + "," + str(n) + "]");
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
                             dimsString(b) + " do not broadcast (" + str(da) + " vs " + str(db) +
                             ")");
    y.dims.d[i] = da == 1 ? db : da;
  }
  y.dims.d[batch] = m;
  y.dims.d[batch + 1] = n;
  KILN_RETURN_IF_ERROR(light::checkOutputDims(kLayer, y.dims));
  out.assign(1, y);
  return Status::ok();
}

Status inferGemm(const GemmParams& p, const std::vector<TensorShape>& in,
                 std::vector<TensorShape>& out) {
  constexpr const char* kLayer = "gemm";
  if (in.size() != 2 && in.size() != 3)
    return invalidArgument(std::string(kLayer) + ": expects 2 or 3 inputs (A, B[, C]), got " +
                           std::to_string(in.size()));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(kLayer, in));
  KILN_RETURN_IF_ERROR(checkFloatInputs(kLayer, in));
  for (int i = 0; i < 2; ++i)
    if (in[i].dims.nbDims != 2)
      return invalidArgument(std::string(kLayer) + ": input " + std::to_string(i) + " (" +
                             (i == 0 ? "A" : "B") + ") must be rank 2, got " +
                             dimsString(in[i].dims));
  int64_t m = 0, ka = 0, kb = 0, n = 0;
  opRowsCols(in[0].dims, p.transposeA, &m, &ka);
  opRowsCols(in[1].dims, p.transposeB, &kb, &n);
  if (ka != kb)
    return invalidArgument(std::string(kLayer) + ": inner dims differ: op(A) of " +
                           dimsString(in[0].dims) + " is [" + str(m) + "," + str(ka) +
                           "], op(B) of " + dimsString(in[1].dims) + " is [" + str(kb) + "," +
                           str(n) + "]");
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
                             " does not broadcast to the output [" + str(m) + "," + str(n) + "]");
  }
  TensorShape y;
  y.type = in[0].type;
  y.dims = makeDims({m, n});
  KILN_RETURN_IF_ERROR(light::checkOutputDims(kLayer, y.dims));
  out.assign(1, y);
  return Status::ok();
}

}  // namespace kiln
