// ONNX models on the command line (compiled with or without the ONNX parser).
#include "onnx_model.h"

#include <array>
#include <cerrno>
#include <cstdlib>

#include "kiln/builder.h"
#include "kiln/network.h"
#ifdef KILN_HAVE_ONNX
#include "kiln/onnx_parser.h"
#endif

namespace kiln::cli {

namespace {

// "4x3x224x224"; the error says what is wrong with it.
Status parseDims(const std::string& text, Dims& d) {
  d = Dims{};
  size_t at = 0;
  while (at <= text.size()) {
    const size_t x = text.find('x', at);
    const std::string part = text.substr(at, x == std::string::npos ? std::string::npos : x - at);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos)
      return invalidArgument("'" + part + "' is not a dim");
    if (d.nbDims == Dims::kMaxDims) return invalidArgument("more than 8 dims");
    try {
      d.d[d.nbDims++] = std::stoll(part);
    } catch (...) {
      return invalidArgument("'" + part + "' is too large");
    }
    if (x == std::string::npos) break;
    at = x + 1;
  }
  return Status::ok();
}

struct ShapeSpec {
  std::string name;
  std::vector<Dims> dims;  // one shape, or min, opt, max
};

Status parseSpec(const std::string& option, const std::string& spec, ShapeSpec& out) {
  const size_t colon = spec.rfind(':');
  const auto bad = [&](const std::string& why) {
    return invalidArgument("--" + option +
                           " expects NAME:DIMS or NAME:MIN,OPT,MAX such as x:4x3x224x224 or "
                           "x:1x3x224x224,8x3x224x224,64x3x224x224, got '" +
                           spec + "': " + why);
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size())
    return bad("no NAME:DIMS");
  out.name = spec.substr(0, colon);
  const std::string text = spec.substr(colon + 1);
  size_t at = 0;
  while (true) {
    const size_t comma = text.find(',', at);
    Dims d;
    const Status parsed =
        parseDims(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at), d);
    if (!parsed) return bad(parsed.message());
    out.dims.push_back(d);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (out.dims.size() != 1 && out.dims.size() != 3)
    return bad("give one shape, or three (min, opt and max)");
  return Status::ok();
}

}  // namespace

// --shape-values NAME:V,V,... (whole numbers, negative ones too: a Reshape's -1).
Status shapeValuesFromArgs(const Args& args, std::map<std::string, std::vector<int64_t>>& out) {
  for (const std::string& spec : args.all("shape-values")) {
    const size_t colon = spec.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return invalidArgument("--shape-values '" + spec + "': give NAME:V,V,... (e.g. shape:4,-1)");
    const std::string name = spec.substr(0, colon);
    std::vector<int64_t> values;
    size_t at = colon + 1;
    while (at <= spec.size() && colon + 1 < spec.size()) {
      const size_t comma = spec.find(',', at);
      const std::string v =
          spec.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      char* end = nullptr;
      errno = 0;
      const long long x = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end || errno == ERANGE)
        return invalidArgument("--shape-values '" + spec + "': '" + v + "' is not a whole number");
      values.push_back(x);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    if (!out.emplace(name, std::move(values)).second)
      return invalidArgument("--shape-values: '" + name + "' is given twice");
  }
  return Status::ok();
}

Status shapesFromArgs(const Args& args, ShapeArgs& shapes) {
  shapes = ShapeArgs{};
  KILN_RETURN_IF_ERROR(shapeValuesFromArgs(args, shapes.shapeValues));
  std::vector<ShapeSpec> specs;
  bool ranges = false;
  for (const std::string& spec : args.all("shapes")) {
    specs.emplace_back();
    KILN_RETURN_IF_ERROR(parseSpec("shapes", spec, specs.back()));
    ranges = ranges || specs.back().dims.size() == 3;
  }
  // trtexec's spelling: one profile from three lists.
  std::map<std::string, std::array<Dims, 3>> trt;
  std::map<std::string, int> trtCount;
  const char* trtNames[3] = {"minShapes", "optShapes", "maxShapes"};
  for (int c = 0; c < 3; ++c) {
    for (const std::string& list : args.all(trtNames[c])) {
      size_t at = 0;
      // Entries are NAME:DIMS separated by commas; a name never starts with a digit here.
      while (at < list.size()) {
        size_t next = list.find(',', at);
        ShapeSpec one;
        KILN_RETURN_IF_ERROR(parseSpec(trtNames[c], list.substr(at, next - at), one));
        if (one.dims.size() != 1)
          return invalidArgument(std::string("--") + trtNames[c] + " takes NAME:DIMS entries");
        trt[one.name][static_cast<size_t>(c)] = one.dims[0];
        trtCount[one.name] |= 1 << c;
        if (next == std::string::npos) break;
        at = next + 1;
      }
    }
  }
  for (const auto& [name, mask] : trtCount)
    if (mask != 7)
      return invalidArgument("input '" + name +
                             "' needs all three of --minShapes, --optShapes and --maxShapes");
  if (!ranges && trt.empty()) {
    for (const ShapeSpec& s : specs)
      if (!shapes.fixed.emplace(s.name, s.dims[0]).second)
        return invalidArgument("--shapes: '" + s.name + "' is given twice");
    return Status::ok();
  }
  std::map<std::string, size_t> seen;
  for (const ShapeSpec& s : specs) {
    if (s.dims.size() != 3) continue;
    const size_t p = seen[s.name]++;
    if (shapes.profiles.size() <= p) shapes.profiles.resize(p + 1);
    for (int c = 0; c < 3; ++c)
      shapes.profiles[p].setDimensions(s.name.c_str(), static_cast<OptProfileSelector>(c),
                                       s.dims[static_cast<size_t>(c)]);
  }
  if (!trt.empty()) {
    OptimizationProfile p;
    for (const auto& [name, d] : trt)
      for (int c = 0; c < 3; ++c)
        p.setDimensions(name.c_str(), static_cast<OptProfileSelector>(c),
                        d[static_cast<size_t>(c)]);
    shapes.profiles.push_back(p);
  }
  // A single shape beside ranges: that input is the same in every profile.
  for (const ShapeSpec& s : specs) {
    if (s.dims.size() != 1) continue;
    for (OptimizationProfile& p : shapes.profiles)
      for (int c = 0; c < 3; ++c)
        p.setDimensions(s.name.c_str(), static_cast<OptProfileSelector>(c), s.dims[0]);
  }
  return Status::ok();
}

#ifdef KILN_HAVE_ONNX

Status buildOnnxPlan(const std::string& modelPath, const BuilderConfig& config,
                     std::vector<uint8_t>& plan, const ShapeArgs& shapes) {
  auto network = createNetwork();
  OnnxParserOptions options;
  options.inputShapes = shapes.fixed;
  options.profiles = shapes.profiles;
  options.shapeValues = shapes.shapeValues;
  KILN_RETURN_IF_ERROR(parseOnnxFile(modelPath, *network, options));
  BuilderConfig withProfiles = config;
  withProfiles.profiles = shapes.profiles;
  return createBuilder()
      ->buildSerializedNetwork(*network, withProfiles, plan)
      .withContext("building '" + modelPath + "'");
}

Status readTensorProtoFile(const std::string& path, const std::string& name, HostTensor& tensor) {
  OnnxTensor t;
  KILN_RETURN_IF_ERROR(readOnnxTensorFile(path, t));
  tensor.name = name;
  tensor.desc.dims = t.dims;
  tensor.desc.type = t.type;
  tensor.data = std::move(t.data);
  return Status::ok();
}

#else

Status buildOnnxPlan(const std::string&, const BuilderConfig&, std::vector<uint8_t>&,
                     const ShapeArgs&) {
  return unsupported("this kiln was built without the ONNX parser (KILN_ONNX=OFF)");
}

Status readTensorProtoFile(const std::string& path, const std::string&, HostTensor&) {
  return unsupported("cannot read '" + path + "': this kiln was built without the ONNX parser");
}

#endif

}  // namespace kiln::cli
