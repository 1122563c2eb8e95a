#include "core/plan_codec.h"

#include <string>
#include <variant>

#include "kiln/layers.h"

namespace kiln::plan {

const char* sectionName(uint32_t tag) {
  switch (static_cast<SectionTag>(tag)) {
    case SectionTag::kTENSORS:
      return "tensors";
    case SectionTag::kSTEPS:
      return "steps";
    case SectionTag::kWEIGHTS:
      return "weights";
    case SectionTag::kPLUGINS:
      return "plugins";
    case SectionTag::kIO:
      return "io";
    case SectionTag::kMEMORY:
      return "memory";
  }
  return "unknown";
}

std::string quotedName(const std::string& s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 80; ++i) {
    const char c = s[i];
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (s.size() > 80) out += "...";
  return out + "'";
}

size_t paramsIndexFor(LayerType type) {
  switch (type) {
    case LayerType::kCONSTANT:
    case LayerType::kPLUGIN:
      return 0;
    case LayerType::kCONVOLUTION:
      return 1;
    case LayerType::kPOOLING:
      return 2;
    case LayerType::kELEMENTWISE:
      return 3;
    case LayerType::kACTIVATION:
      return 4;
    case LayerType::kMATRIX_MULTIPLY:
      return 5;
    case LayerType::kGEMM:
      return 6;
    case LayerType::kSOFTMAX:
      return 7;
    case LayerType::kCONCATENATION:
      return 8;
    case LayerType::kSHUFFLE:
      return 9;
    case LayerType::kREDUCE:
      return 10;
    case LayerType::kREFORMAT:
      return 11;
    case LayerType::kSELECT:
      return 12;
    case LayerType::kGATHER:
      return 13;
    case LayerType::kSLICE:
      return 14;
    case LayerType::kPADDING:
      return 15;
    case LayerType::kRESIZE:
      return 16;
    case LayerType::kTILE:
      return 17;
    case LayerType::kEXPAND:
      return 18;
    case LayerType::kDECONVOLUTION:
      return 19;
    case LayerType::kNORMALIZATION:
      return 20;
    case LayerType::kLRN:
      return 21;
    case LayerType::kROI_ALIGN:
      return 22;
  }
  return std::variant_npos;
}

void writeDims(ByteWriter& w, const Dims& dims) {
  w.i32(dims.nbDims);
  const int32_t n = dims.nbDims < 0 || dims.nbDims > Dims::kMaxDims ? 0 : dims.nbDims;
  for (int32_t i = 0; i < n; ++i) w.i64(dims.d[i]);
}

Status readDims(ByteReader& r, Dims& dims, const char* field) {
  const size_t at = r.offset();
  int32_t n = 0;
  KILN_RETURN_IF_ERROR(r.i32(n, field));
  if (n < 0 || n > Dims::kMaxDims)
    return r.errorAt(at, std::string(field) + " has rank " + std::to_string(n) + ", outside [0, " +
                             std::to_string(Dims::kMaxDims) + "]");
  dims = Dims{};
  dims.nbDims = n;
  for (int32_t i = 0; i < n; ++i) KILN_RETURN_IF_ERROR(r.i64(dims.d[i], field));
  return Status::ok();
}

namespace {

template <typename E>
void writeEnum(ByteWriter& w, E v) {
  w.u32(static_cast<uint32_t>(v));
}

// --- one writer and one reader per parameter struct, field by field ---

void writeParams(ByteWriter& w, const ConvolutionParams& p) {
  w.i32(p.outChannels);
  w.i32(p.kernelH);
  w.i32(p.kernelW);
  w.i32(p.strideH);
  w.i32(p.strideW);
  w.i32(p.padTop);
  w.i32(p.padLeft);
  w.i32(p.padBottom);
  w.i32(p.padRight);
  w.i32(p.dilationH);
  w.i32(p.dilationW);
  w.i32(p.groups);
}

Status readParams(ByteReader& r, ConvolutionParams& p) {
  KILN_RETURN_IF_ERROR(r.i32(p.outChannels, "convolution outChannels"));
  KILN_RETURN_IF_ERROR(r.i32(p.kernelH, "convolution kernelH"));
  KILN_RETURN_IF_ERROR(r.i32(p.kernelW, "convolution kernelW"));
  KILN_RETURN_IF_ERROR(r.i32(p.strideH, "convolution strideH"));
  KILN_RETURN_IF_ERROR(r.i32(p.strideW, "convolution strideW"));
  KILN_RETURN_IF_ERROR(r.i32(p.padTop, "convolution padTop"));
  KILN_RETURN_IF_ERROR(r.i32(p.padLeft, "convolution padLeft"));
  KILN_RETURN_IF_ERROR(r.i32(p.padBottom, "convolution padBottom"));
  KILN_RETURN_IF_ERROR(r.i32(p.padRight, "convolution padRight"));
  KILN_RETURN_IF_ERROR(r.i32(p.dilationH, "convolution dilationH"));
  KILN_RETURN_IF_ERROR(r.i32(p.dilationW, "convolution dilationW"));
  return r.i32(p.groups, "convolution groups");
}

void writeParams(ByteWriter& w, const PoolingParams& p) {
  writeEnum(w, p.type);
  w.i32(p.kernelH);
  w.i32(p.kernelW);
  w.i32(p.strideH);
  w.i32(p.strideW);
  w.i32(p.padTop);
  w.i32(p.padLeft);
  w.i32(p.padBottom);
  w.i32(p.padRight);
  w.boolean(p.countIncludePad);
  w.boolean(p.ceilMode);
}

Status readParams(ByteReader& r, PoolingParams& p) {
  KILN_RETURN_IF_ERROR(r.enumValue(p.type, kPoolingTypeCount, "pooling type"));
  KILN_RETURN_IF_ERROR(r.i32(p.kernelH, "pooling kernelH"));
  KILN_RETURN_IF_ERROR(r.i32(p.kernelW, "pooling kernelW"));
  KILN_RETURN_IF_ERROR(r.i32(p.strideH, "pooling strideH"));
  KILN_RETURN_IF_ERROR(r.i32(p.strideW, "pooling strideW"));
  KILN_RETURN_IF_ERROR(r.i32(p.padTop, "pooling padTop"));
  KILN_RETURN_IF_ERROR(r.i32(p.padLeft, "pooling padLeft"));
  KILN_RETURN_IF_ERROR(r.i32(p.padBottom, "pooling padBottom"));
  KILN_RETURN_IF_ERROR(r.i32(p.padRight, "pooling padRight"));
  KILN_RETURN_IF_ERROR(r.boolean(p.countIncludePad, "pooling countIncludePad"));
  return r.boolean(p.ceilMode, "pooling ceilMode");
}

void writeParams(ByteWriter& w, const ElementwiseParams& p) { writeEnum(w, p.op); }

Status readParams(ByteReader& r, ElementwiseParams& p) {
  return r.enumValue(p.op, kElementwiseOpCount, "elementwise op");
}

void writeParams(ByteWriter& w, const ActivationParams& p) {
  writeEnum(w, p.type);
  w.f32(p.alpha);
  w.f32(p.beta);
}

Status readParams(ByteReader& r, ActivationParams& p) {
  KILN_RETURN_IF_ERROR(r.enumValue(p.type, kActivationTypeCount, "activation type"));
  KILN_RETURN_IF_ERROR(r.f32(p.alpha, "activation alpha"));
  return r.f32(p.beta, "activation beta");
}

void writeParams(ByteWriter& w, const MatrixMultiplyParams& p) {
  w.boolean(p.transposeA);
  w.boolean(p.transposeB);
}

Status readParams(ByteReader& r, MatrixMultiplyParams& p) {
  KILN_RETURN_IF_ERROR(r.boolean(p.transposeA, "matrix multiply transposeA"));
  return r.boolean(p.transposeB, "matrix multiply transposeB");
}

void writeParams(ByteWriter& w, const GemmParams& p) {
  w.f32(p.alpha);
  w.f32(p.beta);
  w.boolean(p.transposeA);
  w.boolean(p.transposeB);
}

Status readParams(ByteReader& r, GemmParams& p) {
  KILN_RETURN_IF_ERROR(r.f32(p.alpha, "gemm alpha"));
  KILN_RETURN_IF_ERROR(r.f32(p.beta, "gemm beta"));
  KILN_RETURN_IF_ERROR(r.boolean(p.transposeA, "gemm transposeA"));
  return r.boolean(p.transposeB, "gemm transposeB");
}

void writeParams(ByteWriter& w, const SoftmaxParams& p) {
  w.i32(p.axis);
  w.boolean(p.log);
}

Status readParams(ByteReader& r, SoftmaxParams& p) {
  KILN_RETURN_IF_ERROR(r.i32(p.axis, "softmax axis"));
  return r.boolean(p.log, "softmax log");
}

void writeParams(ByteWriter& w, const ConcatenationParams& p) { w.i32(p.axis); }

Status readParams(ByteReader& r, ConcatenationParams& p) {
  return r.i32(p.axis, "concatenation axis");
}

// All kMaxDims entries of each permutation are stored, used or not, so that the round trip is
// exact whatever the unused tail holds.
void writeParams(ByteWriter& w, const ShuffleParams& p) {
  w.boolean(p.hasFirstTranspose);
  for (int32_t v : p.firstTranspose) w.i32(v);
  w.boolean(p.hasReshape);
  writeDims(w, p.reshapeDims);
  w.boolean(p.hasSecondTranspose);
  for (int32_t v : p.secondTranspose) w.i32(v);
}

Status readParams(ByteReader& r, ShuffleParams& p) {
  KILN_RETURN_IF_ERROR(r.boolean(p.hasFirstTranspose, "shuffle hasFirstTranspose"));
  for (int32_t& v : p.firstTranspose) KILN_RETURN_IF_ERROR(r.i32(v, "shuffle firstTranspose"));
  KILN_RETURN_IF_ERROR(r.boolean(p.hasReshape, "shuffle hasReshape"));
  KILN_RETURN_IF_ERROR(readDims(r, p.reshapeDims, "shuffle reshapeDims"));
  KILN_RETURN_IF_ERROR(r.boolean(p.hasSecondTranspose, "shuffle hasSecondTranspose"));
  for (int32_t& v : p.secondTranspose) KILN_RETURN_IF_ERROR(r.i32(v, "shuffle secondTranspose"));
  return Status::ok();
}

void writeParams(ByteWriter& w, const ReduceParams& p) {
  writeEnum(w, p.op);
  w.u32(p.axesMask);
  w.boolean(p.keepDims);
}

Status readParams(ByteReader& r, ReduceParams& p) {
  KILN_RETURN_IF_ERROR(r.enumValue(p.op, kReduceOpCount, "reduce op"));
  KILN_RETURN_IF_ERROR(r.u32(p.axesMask, "reduce axesMask"));
  return r.boolean(p.keepDims, "reduce keepDims");
}

void writeParams(ByteWriter& w, const ReformatParams& p) {
  writeEnum(w, p.outputType);
  writeEnum(w, p.outputFormat);
}

Status readParams(ByteReader& r, ReformatParams& p) {
  KILN_RETURN_IF_ERROR(r.enumValue(p.outputType, kDataTypeCount, "reformat outputType"));
  return r.enumValue(p.outputFormat, kTensorFormatCount, "reformat outputFormat");
}

void writeParams(ByteWriter&, const SelectParams&) {}
Status readParams(ByteReader&, SelectParams&) { return Status::ok(); }

void writeParams(ByteWriter& w, const GatherParams& p) { w.i32(p.axis); }
Status readParams(ByteReader& r, GatherParams& p) { return r.i32(p.axis, "gather axis"); }

void writeParams(ByteWriter& w, const SliceParams& p) {
  writeDims(w, p.starts);
  writeDims(w, p.steps);
  writeDims(w, p.outputDims);
}
Status readParams(ByteReader& r, SliceParams& p) {
  KILN_RETURN_IF_ERROR(readDims(r, p.starts, "slice starts"));
  KILN_RETURN_IF_ERROR(readDims(r, p.steps, "slice steps"));
  return readDims(r, p.outputDims, "slice outputDims");
}

void writeParams(ByteWriter& w, const PaddingParams& p) {
  writeEnum(w, p.mode);
  w.f32(p.value);
  for (int64_t v : p.before) w.i64(v);
  for (int64_t v : p.after) w.i64(v);
}
Status readParams(ByteReader& r, PaddingParams& p) {
  KILN_RETURN_IF_ERROR(r.enumValue(p.mode, kPaddingModeCount, "padding mode"));
  KILN_RETURN_IF_ERROR(r.f32(p.value, "padding value"));
  for (int64_t& v : p.before) KILN_RETURN_IF_ERROR(r.i64(v, "padding before"));
  for (int64_t& v : p.after) KILN_RETURN_IF_ERROR(r.i64(v, "padding after"));
  return Status::ok();
}

void writeParams(ByteWriter& w, const ResizeParams& p) {
  writeEnum(w, p.mode);
  writeEnum(w, p.coordinates);
  writeEnum(w, p.rounding);
  for (float v : p.scales) w.f32(v);
  writeDims(w, p.outputDims);
}
Status readParams(ByteReader& r, ResizeParams& p) {
  KILN_RETURN_IF_ERROR(r.enumValue(p.mode, kResizeModeCount, "resize mode"));
  KILN_RETURN_IF_ERROR(r.enumValue(p.coordinates, kResizeCoordinatesCount, "resize coordinates"));
  KILN_RETURN_IF_ERROR(r.enumValue(p.rounding, kResizeRoundingCount, "resize rounding"));
  for (float& v : p.scales) KILN_RETURN_IF_ERROR(r.f32(v, "resize scales"));
  return readDims(r, p.outputDims, "resize outputDims");
}

void writeParams(ByteWriter& w, const TileParams& p) { writeDims(w, p.repeats); }
Status readParams(ByteReader& r, TileParams& p) { return readDims(r, p.repeats, "tile repeats"); }

void writeParams(ByteWriter& w, const ExpandParams& p) { writeDims(w, p.shape); }
Status readParams(ByteReader& r, ExpandParams& p) { return readDims(r, p.shape, "expand shape"); }

void writeParams(ByteWriter& w, const DeconvolutionParams& p) {
  for (int32_t v :
       {p.outChannels, p.kernelH, p.kernelW, p.strideH, p.strideW, p.padTop, p.padLeft, p.padBottom,
        p.padRight, p.dilationH, p.dilationW, p.groups, p.outputPaddingH, p.outputPaddingW}) {
    w.i32(v);
  }
}
Status readParams(ByteReader& r, DeconvolutionParams& p) {
  for (int32_t* v : {&p.outChannels, &p.kernelH, &p.kernelW, &p.strideH, &p.strideW, &p.padTop,
                     &p.padLeft, &p.padBottom, &p.padRight, &p.dilationH, &p.dilationW, &p.groups,
                     &p.outputPaddingH, &p.outputPaddingW}) {
    KILN_RETURN_IF_ERROR(r.i32(*v, "deconvolution parameter"));
  }
  return Status::ok();
}

void writeParams(ByteWriter& w, const NormalizationParams& p) { w.f32(p.epsilon); }
Status readParams(ByteReader& r, NormalizationParams& p) {
  return r.f32(p.epsilon, "normalization epsilon");
}

void writeParams(ByteWriter& w, const LrnParams& p) {
  w.i32(p.size);
  w.f32(p.alpha);
  w.f32(p.beta);
  w.f32(p.bias);
}
Status readParams(ByteReader& r, LrnParams& p) {
  KILN_RETURN_IF_ERROR(r.i32(p.size, "lrn size"));
  KILN_RETURN_IF_ERROR(r.f32(p.alpha, "lrn alpha"));
  KILN_RETURN_IF_ERROR(r.f32(p.beta, "lrn beta"));
  return r.f32(p.bias, "lrn bias");
}

void writeParams(ByteWriter& w, const RoiAlignParams& p) {
  writeEnum(w, p.mode);
  w.i32(p.outputHeight);
  w.i32(p.outputWidth);
  w.i32(p.samplingRatio);
  w.f32(p.spatialScale);
  w.boolean(p.halfPixel);
}
Status readParams(ByteReader& r, RoiAlignParams& p) {
  KILN_RETURN_IF_ERROR(r.enumValue(p.mode, kRoiAlignModeCount, "roi align mode"));
  KILN_RETURN_IF_ERROR(r.i32(p.outputHeight, "roi align outputHeight"));
  KILN_RETURN_IF_ERROR(r.i32(p.outputWidth, "roi align outputWidth"));
  KILN_RETURN_IF_ERROR(r.i32(p.samplingRatio, "roi align samplingRatio"));
  KILN_RETURN_IF_ERROR(r.f32(p.spatialScale, "roi align spatialScale"));
  return r.boolean(p.halfPixel, "roi align halfPixel");
}

template <typename P>
Status readInto(ByteReader& r, LayerParams& params) {
  P p{};
  KILN_RETURN_IF_ERROR(readParams(r, p));
  params = p;
  return Status::ok();
}

}  // namespace

Status writeLayerParams(ByteWriter& w, LayerType type, const LayerParams& params) {
  const size_t expected = paramsIndexFor(type);
  if (expected == std::variant_npos)
    return invalidArgument("invalid layer type " + std::to_string(static_cast<int32_t>(type)));
  if (params.index() != expected)
    return invalidArgument(std::string("the parameters of a ") + layerTypeName(type) +
                           " step hold alternative " + std::to_string(params.index()) +
                           " of LayerParams, expected " + std::to_string(expected));
  std::visit(
      [&w](const auto& p) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(p)>, std::monostate>) writeParams(w, p);
      },
      params);
  return Status::ok();
}

Status readLayerParams(ByteReader& r, LayerType type, LayerParams& params) {
  switch (type) {
    case LayerType::kCONSTANT:
    case LayerType::kPLUGIN:
      params = std::monostate{};
      return Status::ok();
    case LayerType::kCONVOLUTION:
      return readInto<ConvolutionParams>(r, params);
    case LayerType::kPOOLING:
      return readInto<PoolingParams>(r, params);
    case LayerType::kELEMENTWISE:
      return readInto<ElementwiseParams>(r, params);
    case LayerType::kACTIVATION:
      return readInto<ActivationParams>(r, params);
    case LayerType::kMATRIX_MULTIPLY:
      return readInto<MatrixMultiplyParams>(r, params);
    case LayerType::kGEMM:
      return readInto<GemmParams>(r, params);
    case LayerType::kSOFTMAX:
      return readInto<SoftmaxParams>(r, params);
    case LayerType::kCONCATENATION:
      return readInto<ConcatenationParams>(r, params);
    case LayerType::kSHUFFLE:
      return readInto<ShuffleParams>(r, params);
    case LayerType::kREDUCE:
      return readInto<ReduceParams>(r, params);
    case LayerType::kREFORMAT:
      return readInto<ReformatParams>(r, params);
    case LayerType::kSELECT:
      return readInto<SelectParams>(r, params);
    case LayerType::kGATHER:
      return readInto<GatherParams>(r, params);
    case LayerType::kSLICE:
      return readInto<SliceParams>(r, params);
    case LayerType::kPADDING:
      return readInto<PaddingParams>(r, params);
    case LayerType::kRESIZE:
      return readInto<ResizeParams>(r, params);
    case LayerType::kTILE:
      return readInto<TileParams>(r, params);
    case LayerType::kEXPAND:
      return readInto<ExpandParams>(r, params);
    case LayerType::kDECONVOLUTION:
      return readInto<DeconvolutionParams>(r, params);
    case LayerType::kNORMALIZATION:
      return readInto<NormalizationParams>(r, params);
    case LayerType::kLRN:
      return readInto<LrnParams>(r, params);
    case LayerType::kROI_ALIGN:
      return readInto<RoiAlignParams>(r, params);
  }
  return r.errorAt(r.offset(), "invalid layer type " + std::to_string(static_cast<int32_t>(type)));
}

}  // namespace kiln::plan
