// Einsum, lowered at import to layers kiln has: per operand, a sum over the letters no one else
// needs (Reduce), then one Shuffle (transpose to [batch, kept, contracted] and reshape to 3-D);
// each pair of operands one batched MatrixMultiply; the result one Shuffle (reshape to the letters,
// transpose to the output's order). So "bhid,bhjd->bhij" is two shuffles, a matrix product and a
// shuffle, and the matrix product gets its fast tactics. More than two operands contract left to
// right. Transposes ("ij->ji"), sums ("ij->i", "i,i") and outer products ("i,j->ij") are the
// same rules with nothing to contract.
//
// Not lowered, and refused naming the equation: a letter twice in one operand (a diagonal,
// "ii->i"), ellipsis ("...ij"), and operands whose shared letters have different sizes
// (broadcasting is ellipsis-only in ONNX's Einsum).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "onnx/import_context.h"

namespace kiln::onnx_import {
namespace {

// One operand or intermediate: its tensor and the letter of each of its dims.
struct Term {
  ITensor* tensor = nullptr;
  std::string letters;
};

Status einsumError(NodeContext& n, const std::string& equation, const std::string& why,
                   bool unsupported = false) {
  const std::string message = "equation '" + equation + "': " + why;
  return unsupported ? n.unsupportedError(message) : n.error(message);
}

// Sums `t` over the letters not in `keep`.
Status sumAway(NodeContext& n, Term& t, const std::string& keep) {
  ReduceParams p{ReduceOp::kSUM, 0u, false};
  std::string left;
  for (size_t k = 0; k < t.letters.size(); ++k) {
    if (keep.find(t.letters[k]) == std::string::npos)
      p.axesMask |= 1u << k;
    else
      left += t.letters[k];
  }
  if (p.axesMask == 0) return Status::ok();
  ILayer* r = n.net().addReduce(*t.tensor, p);
  if (!r) return n.layerError();
  t = {r->getOutput(0), left};
  return Status::ok();
}

// `t` transposed so that its letters read `order` (a permutation of them), then reshaped to
// `dims`; nothing is added when neither is needed.
Status arrange(NodeContext& n, Term& t, const std::string& order, const Dims& dims) {
  ShuffleParams p;
  for (size_t k = 0; k < order.size(); ++k) {
    p.firstTranspose[k] = int32_t(t.letters.find(order[k]));
    p.hasFirstTranspose |= p.firstTranspose[k] != int32_t(k);
  }
  const Dims now = t.tensor->getDimensions();
  Dims transposed = now;
  for (size_t k = 0; k < order.size(); ++k) transposed.d[k] = now.d[p.firstTranspose[k]];
  p.hasReshape = !(dims == transposed);
  p.reshapeDims = dims;
  if (p.hasReshape) KILN_RETURN_IF_ERROR(n.reshapeDims(transposed, p.reshapeDims));
  if (!p.hasFirstTranspose && !p.hasReshape) return Status::ok();
  ILayer* s = n.net().addShuffle(*t.tensor, p);
  if (!s) return n.layerError();
  t.tensor = s->getOutput(0);
  t.letters = order;
  return Status::ok();
}

// The contraction of a and b keeping the letters in `keep` (a letter of both that is kept is a
// batch letter); the result's letters are batch, then a's kept, then b's kept.
Status contract(NodeContext& n, Term a, Term b, const std::string& keep,
                const std::map<char, int64_t>& size, Term& out) {
  auto in = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
  // A letter that only one side has and no one keeps is summed on that side first.
  std::string aNeeds = keep + b.letters, bNeeds = keep + a.letters;
  KILN_RETURN_IF_ERROR(sumAway(n, a, aNeeds));
  KILN_RETURN_IF_ERROR(sumAway(n, b, bNeeds));
  std::string batch, aKept, bKept, summed;
  for (char c : a.letters) {
    if (in(b.letters, c))
      (in(keep, c) ? batch : summed) += c;
    else
      aKept += c;
  }
  for (char c : b.letters)
    if (!in(a.letters, c)) bKept += c;
  auto product = [&](const std::string& s) {
    int64_t v = 1;
    for (char c : s) v *= size.at(c);
    return v;
  };
  const int64_t nb = product(batch), m = product(aKept), k = product(summed), nn = product(bKept);
  KILN_RETURN_IF_ERROR(arrange(n, a, batch + aKept + summed, makeDims({nb, m, k})));
  KILN_RETURN_IF_ERROR(arrange(n, b, batch + summed + bKept, makeDims({nb, k, nn})));
  ILayer* mm = n.net().addMatrixMultiply(*a.tensor, *b.tensor, MatrixMultiplyParams{});
  if (!mm) return n.layerError();
  out.tensor = mm->getOutput(0);
  out.letters = "";  // [nb, m, nn] until reshaped below
  Dims dims;
  for (char c : batch + aKept + bKept) dims.d[dims.nbDims++] = size.at(c);
  ShuffleParams p;
  p.hasReshape = true;
  p.reshapeDims = dims;
  KILN_RETURN_IF_ERROR(n.reshapeDims(out.tensor->getDimensions(), p.reshapeDims));
  ILayer* s = n.net().addShuffle(*out.tensor, p);
  if (!s) return n.layerError();
  out = {s->getOutput(0), batch + aKept + bKept};
  return Status::ok();
}

Status importEinsum(NodeContext& n) {
  if (n.nbInputs() < 1) return n.error("needs at least one input");
  std::string equation;
  for (char c : n.attrString("equation", "")) {
    if (c != ' ') equation += c;
  }
  if (equation.empty()) return n.error("attribute 'equation' is required");
  if (equation.find('.') != std::string::npos)
    return einsumError(n, equation, "ellipsis ('...') is not supported", true);
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> operands(1);
  for (char c : lhs) {
    if (c == ',')
      operands.emplace_back();
    else if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
      operands.back() += c;
    else
      return einsumError(n, equation, std::string("unexpected character '") + c + "'");
  }
  if (int32_t(operands.size()) != n.nbInputs())
    return einsumError(n, equation,
                       std::to_string(operands.size()) + " operands for " +
                           std::to_string(n.nbInputs()) + " inputs");
  std::map<char, int64_t> size;
  std::map<char, int32_t> count;
  std::vector<Term> terms;
  for (int32_t i = 0; i < n.nbInputs(); ++i) {
    Term t;
    KILN_RETURN_IF_ERROR(n.tensor(i, t.tensor));
    t.letters = operands[size_t(i)];
    const Dims d = t.tensor->getDimensions();
    if (d.nbDims != int32_t(t.letters.size()))
      return einsumError(n, equation,
                         "operand " + std::to_string(i) + " '" + t.letters + "' has " +
                             std::to_string(t.letters.size()) + " letters but input " +
                             std::to_string(i) + " is " + dimsText(d));
    for (size_t k = 0; k < t.letters.size(); ++k) {
      const char c = t.letters[k];
      if (t.letters.find(c) != k)
        return einsumError(n, equation,
                           std::string("letter '") + c + "' repeats in operand " +
                               std::to_string(i) + " (a diagonal), which is not supported",
                           true);
      auto [it, fresh] = size.emplace(c, d.d[k]);
      if (!fresh && it->second != d.d[k])
        return einsumError(n, equation,
                           std::string("letter '") + c + "' is " + std::to_string(it->second) +
                               " in one operand and " + std::to_string(d.d[k]) + " in operand " +
                               std::to_string(i));
      ++count[c];
    }
    terms.push_back(t);
  }
  std::string output;
  if (arrow == std::string::npos) {
    // The implicit form: the letters that occur once, in alphabetical order.
    for (const auto& [c, k] : count)
      if (k == 1) output += c;
  } else {
    output = equation.substr(arrow + 2);
    for (size_t k = 0; k < output.size(); ++k) {
      const char c = output[k];
      if (!size.count(c))
        return einsumError(n, equation, std::string("output letter '") + c + "' is in no operand");
      if (output.find(c) != k)
        return einsumError(n, equation, std::string("output letter '") + c + "' repeats");
    }
  }
  // Left to right: the running result keeps what the output or a later operand needs.
  Term acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) {
    std::string keep = output;
    for (size_t j = i + 1; j < terms.size(); ++j) keep += terms[j].letters;
    KILN_RETURN_IF_ERROR(contract(n, acc, terms[i], keep, size, acc));
  }
  KILN_RETURN_IF_ERROR(sumAway(n, acc, output));
  Dims dims;
  for (char c : output) dims.d[dims.nbDims++] = size.at(c);
  KILN_RETURN_IF_ERROR(arrange(n, acc, output, dims));
  if (acc.tensor == terms[0].tensor && terms.size() == 1) {
    // "ij->ij": nothing to do; an identity shuffle gives the output its own tensor.
    ILayer* s = n.net().addShuffle(*acc.tensor, ShuffleParams{});
    if (!s) return n.layerError();
    acc.tensor = s->getOutput(0);
  }
  return n.setOutput(0, acc.tensor);
}

}  // namespace

void addEinsumImporters(ImporterTable& t) { t.push_back({"Einsum", importEinsum}); }

}  // namespace kiln::onnx_import
