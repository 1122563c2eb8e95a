// ONNX models on the command line (compiled with or without the ONNX parser).
#include "onnx_model.h"

#include "kiln/builder.h"
#include "kiln/network.h"
#ifdef KILN_HAVE_ONNX
#include "kiln/onnx_parser.h"
#endif

namespace kiln::cli {

#ifdef KILN_HAVE_ONNX

Status buildOnnxPlan(const std::string& modelPath, const BuilderConfig& config,
                     std::vector<uint8_t>& plan) {
  auto network = createNetwork();
  KILN_RETURN_IF_ERROR(parseOnnxFile(modelPath, *network));
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

Status buildOnnxPlan(const std::string&, const BuilderConfig&, std::vector<uint8_t>&) {
  return unsupported("this kiln was built without the ONNX parser (KILN_ONNX=OFF)");
}

Status readTensorProtoFile(const std::string& path, const std::string&, HostTensor&) {
  return unsupported("cannot read '" + path + "': this kiln was built without the ONNX parser");
}

#endif

}  // namespace kiln::cli
