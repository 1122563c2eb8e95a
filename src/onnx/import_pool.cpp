// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
#include "onnx/import_context.h"
#include "onnx/window.h"

namespace kiln::onnx_import {
namespace {

Status importPool(NodeContext& n, PoolingType type) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
  if (n.outputUsed(1)) return n.unsupportedError("the Indices output is not supported");
  ITensor* in = nullptr;
  bool oneD = false;
  KILN_RETURN_IF_ERROR(windowInput(n, in, oneD));
  const Dims x = in->getDimensions();
  auto ks = n.attrInts("kernel_shape");
  if (ks.empty()) return n.error("attribute 'kernel_shape' is required");
  if (oneD && ks.size() == 1) ks = {1, ks[0]};
  Window w;
  KILN_RETURN_IF_ERROR(readWindow(n, x, ks, w, false, oneD));
  if (w.dilation[0] != 1 || w.dilation[1] != 1)
    return n.unsupportedError("dilated pooling is not supported");
  if (n.attrInt("storage_order", 0) != 0)
    return n.unsupportedError("storage_order 1 is not supported");
  PoolingParams p;
  p.type = type;
  p.kernelH = int32_t(w.kernel[0]), p.kernelW = int32_t(w.kernel[1]);
  p.strideH = int32_t(w.stride[0]), p.strideW = int32_t(w.stride[1]);
  p.padTop = int32_t(w.padBegin[0]), p.padLeft = int32_t(w.padBegin[1]);
  p.padBottom = int32_t(w.padEnd[0]), p.padRight = int32_t(w.padEnd[1]);
  p.ceilMode = n.attrInt("ceil_mode", 0) != 0;
  p.countIncludePad = n.attrInt("count_include_pad", 0) != 0;
  return setWindowOutput(n, n.net().addPooling(*in, p), oneD);
}

Status importGlobalPool(NodeContext& n, PoolingType type) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
  ITensor* in = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, in));
  const Dims x = in->getDimensions();
  if (x.nbDims != 4) {
    // Any rank >= 3: a reduce over the spatial axes keeps the dims.
    if (x.nbDims < 3) return n.error("input must have at least 3 dims");
    ReduceParams r;
    r.op = type == PoolingType::kGLOBAL_MAX ? ReduceOp::kMAX : ReduceOp::kMEAN;
    for (int32_t k = 2; k < x.nbDims; ++k) r.axesMask |= 1u << k;
    r.keepDims = true;
    return n.setLayerOutputs(n.net().addReduce(*in, r));
  }
  PoolingParams p;
  p.type = type;
  return n.setLayerOutputs(n.net().addPooling(*in, p));
}

}  // namespace

void addPoolImporters(ImporterTable& t) {
  t.push_back({"MaxPool", [](NodeContext& n) { return importPool(n, PoolingType::kMAX); }});
  t.push_back({"AveragePool", [](NodeContext& n) { return importPool(n, PoolingType::kAVERAGE); }});
  t.push_back({"GlobalMaxPool",
               [](NodeContext& n) { return importGlobalPool(n, PoolingType::kGLOBAL_MAX); }});
  t.push_back({"GlobalAveragePool",
               [](NodeContext& n) { return importGlobalPool(n, PoolingType::kGLOBAL_AVERAGE); }});
}

}  // namespace kiln::onnx_import
