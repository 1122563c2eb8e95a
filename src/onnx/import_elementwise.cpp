// Two-input (and variadic) element-wise ops, comparisons, PRelu, Mod and Where; folded on
// constants.
#include <cmath>

#include "onnx/import_context.h"

namespace kiln::onnx_import {
namespace {

double evalBinary(ElementwiseOp op, double a, double b, bool isInt) {
  switch (op) {
    case ElementwiseOp::kADD:
      return a + b;
    case ElementwiseOp::kSUB:
      return a - b;
    case ElementwiseOp::kMUL:
      return a * b;
    case ElementwiseOp::kDIV:
      if (isInt) return b == 0 ? 0 : double(int64_t(a) / int64_t(b));
      return a / b;
    case ElementwiseOp::kMAX:
      return std::max(a, b);
    case ElementwiseOp::kMIN:
      return std::min(a, b);
    case ElementwiseOp::kPOW:
      return std::pow(a, b);
    case ElementwiseOp::kEQUAL:
      return a == b;
    case ElementwiseOp::kLESS:
      return a < b;
    case ElementwiseOp::kGREATER:
      return a > b;
    case ElementwiseOp::kGREATER_OR_EQUAL:
      return a >= b;
    case ElementwiseOp::kLESS_OR_EQUAL:
      return a <= b;
    case ElementwiseOp::kAND:
      return a != 0 && b != 0;
    case ElementwiseOp::kOR:
      return a != 0 || b != 0;
    case ElementwiseOp::kXOR:
      return (a != 0) != (b != 0);
    case ElementwiseOp::kPRELU:
      return a < 0 ? a * b : a;
    case ElementwiseOp::kFMOD:  // integers as the kernels do: by 0 (or -1) gives 0
      if (isInt) return (b == 0 || b == -1) ? 0 : double(int64_t(a) % int64_t(b));
      return std::fmod(a, b);
    case ElementwiseOp::kMOD: {  // integers only (the importer refuses floats)
      if (b == 0 || b == -1) return 0;
      const int64_t r = int64_t(a) % int64_t(b);
      return double(r != 0 && ((r < 0) != (b < 0)) ? r + int64_t(b) : r);
    }
  }
  return 0;
}

// The parser sees only the public headers (its build wall), so it keeps its own list of the ops
// with a bool output.
bool isComparison(ElementwiseOp op) {
  return op == ElementwiseOp::kEQUAL || op == ElementwiseOp::kLESS ||
         op == ElementwiseOp::kGREATER || op == ElementwiseOp::kGREATER_OR_EQUAL ||
         op == ElementwiseOp::kLESS_OR_EQUAL;
}
bool isLogical(ElementwiseOp op) {
  return op == ElementwiseOp::kAND || op == ElementwiseOp::kOR || op == ElementwiseOp::kXOR;
}

// An operand: a network tensor or a constant (an input, or an intermediate of a variadic op).
struct Operand {
  ITensor* tensor = nullptr;
  std::shared_ptr<const ConstTensor> constant;
  DataType type() const { return constant ? constant->type : tensor->getType(); }
};

Status operand(NodeContext& n, int32_t i, Operand& out) {
  out = Operand{};
  if (n.isConstant(i)) {
    out.constant = n.ctx.values[n.node.input(i)].constant;
    return Status::ok();
  }
  return n.tensor(i, out.tensor);
}

std::shared_ptr<const ConstTensor> castTo(const ConstTensor& c, DataType type) {
  auto out = std::make_shared<ConstTensor>(ConstTensor::make(type, c.dims));
  for (int64_t k = 0; k < c.count(); ++k) out->set(k, c.at(k));
  return out;
}

Status asTensor(NodeContext& n, Operand& o, const std::string& suffix) {
  if (o.tensor) return Status::ok();
  Value v;
  v.constant = o.constant;
  return constantTensor(n.ctx, v, n.node.output(0) + suffix, o.tensor);
}

// a op b, folded when both are constants. Mixed types are resolved by converting a constant
// operand to the other's type (e.g. Pow(x, 2) with an int64 exponent); two run-time tensors of
// different types are refused.
Status binary(NodeContext& n, Operand a, Operand b, ElementwiseOp op, Operand& out) {
  if (a.constant && b.constant) {
    Dims od;
    if (!broadcast({a.constant->dims, b.constant->dims}, od))
      return n.error("inputs do not broadcast together");
    if (!foldable(od)) return n.unsupportedError("the folded constant is too large");
    const bool isInt = !a.constant->isFloat() && !b.constant->isFloat();
    const DataType type = isComparison(op) || isLogical(op)
                              ? DataType::kBOOL
                              : (isInt ? a.constant->type : DataType::kFLOAT);
    auto c = std::make_shared<ConstTensor>(ConstTensor::make(type, od));
    for (int64_t k = 0; k < volume(od); ++k)
      c->set(k, evalBinary(op, a.constant->at(sourceIndex(od, a.constant->dims, k)),
                           b.constant->at(sourceIndex(od, b.constant->dims, k)), isInt));
    out = Operand{};
    out.constant = c;
    return Status::ok();
  }
  // Integer arithmetic at run time is index math (Swin's window shifts by Mod; the padding mask of
  // transformers 5, batch * sequence + position, gathered from the flattened attention mask):
  // int32 and int64 add, sub, mul, div (truncating), max, min and the remainders run as the
  // layer's integer forms (elementwise_semantics.h). Pow and PRelu have none.
  if (isLogical(op) && (a.type() != DataType::kBOOL || b.type() != DataType::kBOOL))
    return n.error(std::string("inputs must be bool, got ") + dataTypeName(a.type()) + " and " +
                   dataTypeName(b.type()));
  auto isInteger = [](DataType t) { return t == DataType::kINT32 || t == DataType::kINT64; };
  const bool arithmetic = !isComparison(op) && !isLogical(op);
  const bool integerForm = op != ElementwiseOp::kPOW && op != ElementwiseOp::kPRELU;
  if (arithmetic && !isFloatType(a.type()) && !isFloatType(b.type()) &&
      !(integerForm && isInteger(a.type()) && isInteger(b.type())))
    return n.unsupportedError(
        std::string("arithmetic on ") + dataTypeName(a.type()) +
        " run-time tensors is not supported" +
        (integerForm ? " (floating point, int32 and int64 only)" : " (floating point only)"));
  if (a.type() != b.type()) {
    if (b.constant)
      b.constant = castTo(*b.constant, a.type());
    else if (a.constant)
      a.constant = castTo(*a.constant, b.type());
    else
      return n.unsupportedError(std::string("inputs have different types (") +
                                dataTypeName(a.type()) + " and " + dataTypeName(b.type()) + ")");
  }
  KILN_RETURN_IF_ERROR(asTensor(n, a, "_a"));
  KILN_RETURN_IF_ERROR(asTensor(n, b, "_b"));
  ILayer* layer = n.net().addElementwise(*a.tensor, *b.tensor, op);
  if (!layer) return n.layerError();
  out = Operand{};
  out.tensor = layer->getOutput(0);
  return Status::ok();
}

// Before opset 7, B could be aligned to A starting at `axis` (B [3] against A [2, 3, 4, 5] at
// axis 1): B gets trailing 1s so that numpy's right-aligned rules give the same result.
Status legacyBroadcast(NodeContext& n, Operand& b) {
  const int32_t rankA = n.dims(0).nbDims;
  const Dims bd = n.dims(1);
  int32_t axis;
  KILN_RETURN_IF_ERROR(n.axis(n.attrInt("axis", 0), rankA, axis));
  if (axis + bd.nbDims > rankA) return n.error("B does not fit A at the broadcast axis");
  Dims nd = bd;
  while (nd.nbDims < rankA - axis) nd.d[nd.nbDims++] = 1;
  if (b.constant) {
    auto c = std::make_shared<ConstTensor>(*b.constant);
    c->dims = nd;
    b.constant = c;
    return Status::ok();
  }
  ILayer* r = nullptr;
  KILN_RETURN_IF_ERROR(n.reshape(*b.tensor, nd, r));
  b.tensor = r->getOutput(0);
  return Status::ok();
}

Status setResult(NodeContext& n, const Operand& r) {
  if (r.constant) return n.setOutput(0, *r.constant);
  return n.setOutput(0, r.tensor);
}

Status importBinary(NodeContext& n, ElementwiseOp op) {
  KILN_RETURN_IF_ERROR(n.requireInputs(2, 2));
  Operand a, b, r;
  KILN_RETURN_IF_ERROR(operand(n, 0, a));
  KILN_RETURN_IF_ERROR(operand(n, 1, b));
  if (n.opset() < 7 && n.attrInt("broadcast", 0) != 0 && n.attr("axis"))
    KILN_RETURN_IF_ERROR(legacyBroadcast(n, b));
  // PRelu before opset 7: a 1-D slope of C values is per channel (axis 1).
  if (op == ElementwiseOp::kPRELU && n.opset() < 7 && n.dims(1).nbDims == 1 &&
      n.dims(0).nbDims > 2 && n.dims(1).d[0] == n.dims(0).d[1] && n.dims(1).d[0] != 1) {
    auto c = b.constant ? std::make_shared<ConstTensor>(*b.constant) : nullptr;
    Dims nd = n.dims(1);
    while (nd.nbDims < n.dims(0).nbDims - 1) nd.d[nd.nbDims++] = 1;
    if (c) {
      c->dims = nd;
      b.constant = c;
    } else {
      ILayer* r = nullptr;
      KILN_RETURN_IF_ERROR(n.reshape(*b.tensor, nd, r));
      b.tensor = r->getOutput(0);
    }
  }
  KILN_RETURN_IF_ERROR(binary(n, a, b, op, r));
  return setResult(n, r);
}

// Max, Min, Sum, Mean: a chain of binary layers; Mean divides by the count at the end.
Status importVariadic(NodeContext& n, ElementwiseOp op, bool mean) {
  if (n.nbInputs() < 1) return n.error("needs at least one input");
  for (int32_t i = 0; i < n.nbInputs(); ++i)
    if (!n.hasInput(i)) return n.error("input " + std::to_string(i) + " is missing");
  Operand acc;
  KILN_RETURN_IF_ERROR(operand(n, 0, acc));
  for (int32_t i = 1; i < n.nbInputs(); ++i) {
    Operand b;
    KILN_RETURN_IF_ERROR(operand(n, i, b));
    KILN_RETURN_IF_ERROR(binary(n, acc, b, op, acc));
  }
  if (mean && n.nbInputs() > 1) {
    Operand count;
    auto c = std::make_shared<ConstTensor>(ConstTensor::make(DataType::kFLOAT, Dims{}));
    c->f[0] = float(n.nbInputs());
    count.constant = c;
    KILN_RETURN_IF_ERROR(binary(n, acc, count, ElementwiseOp::kDIV, acc));
  }
  return setResult(n, acc);  // a single input is an alias of it
}

Status importWhere(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(3, 3));
  if (n.type(0) != DataType::kBOOL) return n.error("condition must be bool");
  if (n.isConstant(0) && n.isConstant(1) && n.isConstant(2)) {
    const ConstTensor *c, *x, *y;
    KILN_RETURN_IF_ERROR(n.constant(0, c));
    KILN_RETURN_IF_ERROR(n.constant(1, x));
    KILN_RETURN_IF_ERROR(n.constant(2, y));
    Dims out;
    if (!broadcast({c->dims, x->dims, y->dims}, out))
      return n.error("inputs do not broadcast together");
    if (!foldable(out)) return n.unsupportedError("the folded constant is too large");
    ConstTensor r = ConstTensor::make(x->type, out);
    for (int64_t k = 0; k < volume(out); ++k)
      r.set(k, c->at(sourceIndex(out, c->dims, k)) != 0 ? x->at(sourceIndex(out, x->dims, k))
                                                        : y->at(sourceIndex(out, y->dims, k)));
    return n.setOutput(0, std::move(r));
  }
  ITensor *c, *x, *y;
  KILN_RETURN_IF_ERROR(n.tensor(0, c));
  KILN_RETURN_IF_ERROR(n.tensor(1, x));
  KILN_RETURN_IF_ERROR(n.tensor(2, y));
  return n.setLayerOutputs(n.net().addSelect(*c, *x, *y));
}

// Mod: fmod=0 is the remainder with the divisor's sign, which ONNX defines on integers only
// (a float Mod must set fmod=1); fmod=1 is C's fmod, on either.
Status importMod(NodeContext& n) {
  const bool fmod = n.attrInt("fmod", 0) != 0;
  KILN_RETURN_IF_ERROR(n.requireInputs(2, 2));
  if (!fmod && (isFloatType(n.type(0)) || isFloatType(n.type(1))))
    return n.error("fmod=0 is defined on integer inputs only; a floating-point Mod needs fmod=1");
  return importBinary(n, fmod ? ElementwiseOp::kFMOD : ElementwiseOp::kMOD);
}

Importer bin(ElementwiseOp op) {
  return [=](NodeContext& n) { return importBinary(n, op); };
}
Importer var(ElementwiseOp op, bool mean = false) {
  return [=](NodeContext& n) { return importVariadic(n, op, mean); };
}

}  // namespace

void addElementwiseImporters(ImporterTable& t) {
  using E = ElementwiseOp;
  t.push_back({"Add", bin(E::kADD)});
  t.push_back({"Sub", bin(E::kSUB)});
  t.push_back({"Mul", bin(E::kMUL)});
  t.push_back({"Div", bin(E::kDIV)});
  t.push_back({"Pow", bin(E::kPOW)});
  t.push_back({"Equal", bin(E::kEQUAL)});
  t.push_back({"Less", bin(E::kLESS)});
  t.push_back({"Greater", bin(E::kGREATER)});
  t.push_back({"GreaterOrEqual", bin(E::kGREATER_OR_EQUAL)});  // opset 12
  t.push_back({"LessOrEqual", bin(E::kLESS_OR_EQUAL)});
  t.push_back({"And", bin(E::kAND)});
  t.push_back({"Or", bin(E::kOR)});
  t.push_back({"Xor", bin(E::kXOR)});
  t.push_back({"PRelu", bin(E::kPRELU)});
  t.push_back({"Max", var(E::kMAX)});
  t.push_back({"Min", var(E::kMIN)});
  t.push_back({"Sum", var(E::kADD)});
  t.push_back({"Mean", var(E::kADD, true)});
  t.push_back({"Where", importWhere});
  t.push_back({"Mod", importMod});
}

}  // namespace kiln::onnx_import
