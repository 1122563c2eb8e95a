// ReduceMean/ReduceSum/ReduceMax, ArgMax, Softmax and LogSoftmax.
#include "onnx/import_context.h"

namespace kiln::onnx_import {
namespace {

Status importReduce(NodeContext& n, ReduceOp op) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 2));
  const Dims in = n.dims(0);
  std::vector<int64_t> axes;
  // ReduceSum takes axes as an input from opset 13, the others from opset 18 (with
  // noop_with_empty_axes, as ReduceSum 13); before, an attribute.
  const bool axesInput = n.opset() >= 18 || (n.node.op_type() == "ReduceSum" && n.opset() >= 13);
  if (axesInput) {
    if (n.hasInput(1)) {
      const ConstTensor* c = nullptr;
      KILN_RETURN_IF_ERROR(n.constant(1, c));
      axes = toInts(*c);
    }
  } else {
    if (n.nbInputs() > 1)
      return n.error("expects 1 input at opset " + std::to_string(n.opset()) +
                     " (axes is an attribute before opset 18)");
    axes = n.attrInts("axes");
  }
  ReduceParams p;
  p.op = op;
  p.keepDims = n.attrInt("keepdims", 1) != 0;
  if (axes.empty()) {
    if (n.attrInt("noop_with_empty_axes", 0) != 0) {
      n.ctx.values[n.node.output(0)] = n.ctx.values[n.node.input(0)];
      return Status::ok();
    }
    for (int32_t k = 0; k < in.nbDims; ++k) p.axesMask |= 1u << k;
  }
  for (int64_t a : axes) {
    int32_t ax;
    KILN_RETURN_IF_ERROR(n.axis(a, in.nbDims, ax));
    p.axesMask |= 1u << ax;
  }
  ITensor* t = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, t));
  return n.setLayerOutputs(n.net().addReduce(*t, p));
}

Status importArgMax(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
  if (n.attrInt("select_last_index", 0) != 0)
    return n.unsupportedError("select_last_index is not supported");
  int32_t ax;
  KILN_RETURN_IF_ERROR(n.axis(n.attrInt("axis", 0), n.dims(0).nbDims, ax));
  ReduceParams p;
  p.op = ReduceOp::kARGMAX;
  p.axesMask = 1u << ax;
  p.keepDims = n.attrInt("keepdims", 1) != 0;
  ITensor* t = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, t));
  return n.setLayerOutputs(n.net().addReduce(*t, p));
}

Status importSoftmax(NodeContext& n, bool log) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
  ITensor* t = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, t));
  const Dims in = t->getDimensions();
  const bool legacy = n.opset() < 13;
  int32_t ax;
  KILN_RETURN_IF_ERROR(n.axis(n.attrInt("axis", legacy ? 1 : -1), std::max(in.nbDims, 1), ax));
  SoftmaxParams p;
  p.log = log;
  if (!legacy || ax == in.nbDims - 1) {
    p.axis = ax;
    return n.setLayerOutputs(n.net().addSoftmax(*t, p));
  }
  // Before opset 13 the input is seen as 2-D [prod(dims before axis), prod(dims from axis)].
  int64_t outer = 1, inner = 1;
  for (int32_t k = 0; k < in.nbDims; ++k) (k < ax ? outer : inner) *= in.d[k];
  ILayer* flat = nullptr;
  KILN_RETURN_IF_ERROR(n.reshape(*t, makeDims({outer, inner}), flat));
  p.axis = 1;
  ILayer* sm = n.net().addSoftmax(*flat->getOutput(0), p);
  if (!sm) return n.layerError();
  ILayer* back = nullptr;
  KILN_RETURN_IF_ERROR(n.reshape(*sm->getOutput(0), in, back));
  return n.setLayerOutputs(back);
}

}  // namespace

void addReduceImporters(ImporterTable& t) {
  // Input 1 (axes, where it is an input) must be a constant.
  t.push_back({"ReduceMean", [](NodeContext& n) { return importReduce(n, ReduceOp::kMEAN); }, {1}});
  t.push_back({"ReduceSum", [](NodeContext& n) { return importReduce(n, ReduceOp::kSUM); }, {1}});
  t.push_back({"ReduceMax", [](NodeContext& n) { return importReduce(n, ReduceOp::kMAX); }, {1}});
  t.push_back({"ArgMax", importArgMax});
  t.push_back({"Softmax", [](NodeContext& n) { return importSoftmax(n, false); }});
  t.push_back({"LogSoftmax", [](NodeContext& n) { return importSoftmax(n, true); }});
}

}  // namespace kiln::onnx_import
