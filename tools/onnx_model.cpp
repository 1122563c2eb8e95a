// ONNX models on the command line (compiled with or without the ONNX parser).
#include "onnx_model.h"

#include "kiln/builder.h"
#include "kiln/network.h"
#ifdef KILN_HAVE_ONNX
#include "kiln/onnx_parser.h"
#endif

namespace kiln::cli {

Status shapesFromArgs(const Args& args, InputShapes& shapes) {
  for (const std::string& spec : args.all("shapes")) {
    const size_t colon = spec.rfind(':');
    const auto bad = [&](const std::string& why) {
      return invalidArgument("--shapes expects NAME:DIMS such as x:4x3x224x224, got '" + spec +
                             "': " + why);
    };
    if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size())
      return bad("no NAME:DIMS");
    const std::string name = spec.substr(0, colon), text = spec.substr(colon + 1);
    if (text.find(',') != std::string::npos)
      return bad(
          "a range MIN,OPT,MAX is an optimization profile, which kiln does not build yet; "
          "give one shape and kiln builds for it");
    Dims d;
    size_t at = 0;
    while (at <= text.size()) {
      const size_t x = text.find('x', at);
      const std::string part = text.substr(at, x == std::string::npos ? std::string::npos : x - at);
      if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos)
        return bad("'" + part + "' is not a dim");
      if (d.nbDims == Dims::kMaxDims) return bad("more than 8 dims");
      try {
        d.d[d.nbDims++] = std::stoll(part);
      } catch (...) {
        return bad("'" + part + "' is too large");
      }
      if (x == std::string::npos) break;
      at = x + 1;
    }
    if (!shapes.emplace(name, d).second) return bad("'" + name + "' is given twice");
  }
  return Status::ok();
}

#ifdef KILN_HAVE_ONNX

Status buildOnnxPlan(const std::string& modelPath, const BuilderConfig& config,
                     std::vector<uint8_t>& plan, const InputShapes& shapes) {
  auto network = createNetwork();
  OnnxParserOptions options;
  options.inputShapes = shapes;
  KILN_RETURN_IF_ERROR(parseOnnxFile(modelPath, *network, options));
  return createBuilder()
      ->buildSerializedNetwork(*network, config, plan)
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
                     const InputShapes&) {
  return unsupported("this kiln was built without the ONNX parser (KILN_ONNX=OFF)");
}

Status readTensorProtoFile(const std::string& path, const std::string&, HostTensor&) {
  return unsupported("cannot read '" + path + "': this kiln was built without the ONNX parser");
}

#endif

}  // namespace kiln::cli
