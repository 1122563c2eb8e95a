// The op type -> importer table, assembled from the family files.
#include <algorithm>
#include <map>

#include "kiln/onnx_parser.h"
#include "onnx/import_context.h"

namespace kiln {
namespace onnx_import {
namespace {

const std::map<std::string, ImporterEntry>& table() {
  static const std::map<std::string, ImporterEntry> t = [] {
    ImporterTable list;
    addActivationImporters(list);
    addElementwiseImporters(list);
    addConvImporters(list);
    addPoolImporters(list);
    addMatmulImporters(list);
    addEinsumImporters(list);
    addShapeImporters(list);
    addTensorImporters(list);
    addResizeImporters(list);
    addReduceImporters(list);
    addMiscImporters(list);
    addIndexImporters(list);
    std::map<std::string, ImporterEntry> m;
    for (ImporterEntry& e : list) m.emplace(e.opType, std::move(e));
    return m;
  }();
  return t;
}

}  // namespace

const Importer* findImporter(const std::string& opType) {
  auto it = table().find(opType);
  return it == table().end() ? nullptr : &it->second.import;
}

}  // namespace onnx_import

const std::vector<std::string>& onnxSupportedOps() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (const auto& [name, entry] : onnx_import::table()) v.push_back(name);
    return v;
  }();
  return ops;
}

const std::vector<int32_t>& onnxConstantInputs(const std::string& opType) {
  static const std::vector<int32_t> none;
  auto it = onnx_import::table().find(opType);
  return it == onnx_import::table().end() ? none : it->second.constantInputs;
}

}  // namespace kiln
