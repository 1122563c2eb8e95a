// The op type -> importer table, assembled from the family files.
#include <algorithm>
#include <map>

#include "kiln/onnx_parser.h"
#include "onnx/import_context.h"

namespace kiln {
namespace onnx_import {
namespace {

const std::map<std::string, Importer>& table() {
  static const std::map<std::string, Importer> t = [] {
    ImporterTable list;
    addActivationImporters(list);
    addElementwiseImporters(list);
    addConvImporters(list);
    addPoolImporters(list);
    addMatmulImporters(list);
    addShapeImporters(list);
    addTensorImporters(list);
    addResizeImporters(list);
    addReduceImporters(list);
    addMiscImporters(list);
    std::map<std::string, Importer> m;
    for (auto& [name, fn] : list) m.emplace(name, std::move(fn));
    return m;
  }();
  return t;
}

}  // namespace

const Importer* findImporter(const std::string& opType) {
  auto it = table().find(opType);
  return it == table().end() ? nullptr : &it->second;
}

}  // namespace onnx_import

const std::vector<std::string>& onnxSupportedOps() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (const auto& [name, fn] : onnx_import::table()) v.push_back(name);
    return v;
  }();
  return ops;
}

}  // namespace kiln
