// See format_choice.h.
#include "builder/format_choice.h"

namespace kiln {
namespace {

bool isFloat(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16;
}

bool rank4Float(const Dims& d, DataType t) { return d.nbDims == 4 && isFloat(t); }

FormatCandidate allLinear(const FormatQuery& q) {
  FormatCandidate c;
  c.inputs.assign(q.inputDims.size(), TensorFormat::kLINEAR);
  c.outputs.assign(q.outputDims.size(), TensorFormat::kLINEAR);
  return c;
}

// Channels-last for the computed rank-4 float inputs (and input 1 too when `weights`) and the
// rank-4 float outputs.
FormatCandidate channelsLast(const FormatQuery& q, bool weights, const char* what) {
  FormatCandidate c = allLinear(q);
  c.what = what;
  for (size_t i = 0; i < q.inputDims.size(); ++i) {
    const bool computed = !q.inputConstant[i] || (weights && i == 1);
    if (computed && rank4Float(q.inputDims[i], q.inputTypes[i]))
      c.inputs[i] = TensorFormat::kCHANNELS_LAST;
  }
  for (size_t o = 0; o < q.outputDims.size(); ++o)
    if (rank4Float(q.outputDims[o], q.outputTypes[o])) c.outputs[o] = TensorFormat::kCHANNELS_LAST;
  return c;
}

bool anyComputedChannelsLast(const FormatQuery& q) {
  for (size_t i = 0; i < q.inputDims.size(); ++i)
    if (!q.inputConstant[i] && q.inputFormats[i] == TensorFormat::kCHANNELS_LAST) return true;
  return false;
}

}  // namespace

std::vector<FormatCandidate> formatCandidates(const FormatQuery& q) {
  std::vector<FormatCandidate> out;
  if (q.device == DeviceKind::kCUDA && !q.inputDims.empty()) {
    if (q.type == LayerType::kCONVOLUTION) {
      const DataType t = q.inputTypes[0];
      const bool half = t == DataType::kHALF || t == DataType::kBF16;
      if (half || anyComputedChannelsLast(q)) {
        out.push_back(channelsLast(q, true, "channels_last, weights channels_last"));
        out.push_back(channelsLast(q, false, "channels_last, weights linear"));
      }
    } else if (anyComputedChannelsLast(q)) {
      out.push_back(channelsLast(q, false, "channels_last (follows its input)"));
      // A Shuffle may read a channels-last map into a linear output in its memory order (Shuffle's
      // channels_last_copy: a permute (0, 2, 3, 1) to [N, H, W, C]); where every output is of
      // rank 4 the candidate above makes them channels-last too, so this one is apart.
      if (q.type == LayerType::kSHUFFLE) {
        FormatCandidate c = channelsLast(q, false, "channels_last in, linear out");
        c.outputs.assign(q.outputDims.size(), TensorFormat::kLINEAR);
        if (c.outputs != out.back().outputs) out.push_back(c);
      }
    }
  }
  out.push_back(allLinear(q));
  return out;
}

}  // namespace kiln
