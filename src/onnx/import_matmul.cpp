// MatMul (numpy rules, 1-D operands promoted and the added dim removed again) and Gemm.
#include "onnx/import_context.h"

namespace kiln::onnx_import {
namespace {

Status importMatMul(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(2, 2));
  ITensor *a, *b;
  KILN_RETURN_IF_ERROR(n.tensor(0, a));
  KILN_RETURN_IF_ERROR(n.tensor(1, b));
  const Dims da = a->getDimensions(), db = b->getDimensions();
  if (da.nbDims < 1 || db.nbDims < 1) return n.error("inputs must have at least 1 dim");
  // numpy: a 1-D left operand is a row [1, K], a 1-D right operand a column [K, 1].
  if (da.nbDims == 1) {
    ILayer* r = nullptr;
    KILN_RETURN_IF_ERROR(n.reshape(*a, makeDims({1, da.d[0]}), r));
    a = r->getOutput(0);
  }
  if (db.nbDims == 1) {
    ILayer* r = nullptr;
    KILN_RETURN_IF_ERROR(n.reshape(*b, makeDims({db.d[0], 1}), r));
    b = r->getOutput(0);
  }
  ILayer* mm = n.net().addMatrixMultiply(*a, *b, MatrixMultiplyParams{});
  if (!mm) return n.layerError();
  if (da.nbDims > 1 && db.nbDims > 1) return n.setLayerOutputs(mm);
  Dims out = mm->getOutput(0)->getDimensions();
  Dims squeezed;
  for (int32_t k = 0; k < out.nbDims; ++k) {
    if (da.nbDims == 1 && k == out.nbDims - 2) continue;
    if (db.nbDims == 1 && k == out.nbDims - 1) continue;
    squeezed.d[squeezed.nbDims++] = out.d[k];
  }
  ILayer* r = nullptr;
  KILN_RETURN_IF_ERROR(n.reshape(*mm->getOutput(0), squeezed, r));
  return n.setLayerOutputs(r);
}

Status importGemm(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(2, 3));
  ITensor *a, *b, *c = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, a));
  KILN_RETURN_IF_ERROR(n.tensor(1, b));
  if (n.hasInput(2)) KILN_RETURN_IF_ERROR(n.tensor(2, c));
  GemmParams p;
  p.alpha = n.attrFloat("alpha", 1.f);
  p.beta = n.attrFloat("beta", 1.f);
  p.transposeA = n.attrInt("transA", 0) != 0;
  p.transposeB = n.attrInt("transB", 0) != 0;
  // Before opset 7 C needed broadcast=1 to be smaller than [M, N]; numpy rules cover both forms.
  return n.setLayerOutputs(n.net().addGemm(*a, *b, c, p));
}

}  // namespace

void addMatmulImporters(ImporterTable& t) {
  t.push_back({"MatMul", importMatMul});
  t.push_back({"Gemm", importGemm});
}

}  // namespace kiln::onnx_import
