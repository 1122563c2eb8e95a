// Helpers for driving the CropAndResize plugin through its creator, as the engine does.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kiln/float16.h"
#include "kiln/plugin.h"
#include "kiln/plugins.h"

namespace kiln::testing {

inline IPluginCreator* creator() {
  const PluginLibraryInfo* lib = getBuiltinPluginLibrary();
  if (!lib) return nullptr;
  for (int32_t i = 0; i < lib->nbCreators; ++i) {
    IPluginCreator* c = lib->creators[i];
    if (std::strcmp(c->getPluginName(), "CropAndResize") == 0 &&
        std::strcmp(c->getPluginVersion(), "1") == 0)
      return c;
  }
  return nullptr;
}

struct PluginDeleter {
  void operator()(IPlugin* p) const {
    if (p) p->destroy();
  }
};
using PluginPtr = std::unique_ptr<IPlugin, PluginDeleter>;

inline std::string lastError(const IPluginCreator* c) {
  const char* e = c->getLastError();
  return e ? e : "";
}
inline std::string lastError(const IPlugin* p) {
  const char* e = p->getLastError();
  return e ? e : "";
}

// A field collection that owns its values.
class Fields {
 public:
  Fields& i32(const char* name, int32_t v) { return add(name, PluginFieldType::kINT32, &v, 4, 1); }
  Fields& i64(const char* name, int64_t v) { return add(name, PluginFieldType::kINT64, &v, 8, 1); }
  Fields& f32(const char* name, float v) { return add(name, PluginFieldType::kFLOAT32, &v, 4, 1); }
  Fields& f64(const char* name, double v) { return add(name, PluginFieldType::kFLOAT64, &v, 8, 1); }
  Fields& str(const char* name, const std::string& s) {
    return add(name, PluginFieldType::kSTRING, s.data(), s.size(), static_cast<int32_t>(s.size()));
  }
  Fields& raw(const char* name, PluginFieldType type, const void* data, size_t bytes,
              int32_t length) {
    return add(name, type, data, bytes, length);
  }
  const PluginFieldCollection* get() {
    fields_.clear();
    for (size_t i = 0; i < names_.size(); ++i)
      fields_.push_back({names_[i].c_str(), data_[i].data(), types_[i], lengths_[i]});
    collection_ = {static_cast<int32_t>(fields_.size()), fields_.data()};
    return &collection_;
  }

 private:
  Fields& add(const char* name, PluginFieldType type, const void* data, size_t bytes,
              int32_t length) {
    names_.emplace_back(name);
    // +1 so that data() is never null, even for an empty string
    std::vector<uint8_t> d(bytes + 1, 0);
    if (bytes) std::memcpy(d.data(), data, bytes);
    data_.push_back(std::move(d));
    types_.push_back(type);
    lengths_.push_back(length);
    return *this;
  }
  std::vector<std::string> names_;
  std::vector<std::vector<uint8_t>> data_;
  std::vector<PluginFieldType> types_;
  std::vector<int32_t> lengths_;
  std::vector<PluginField> fields_;
  PluginFieldCollection collection_;
};

inline Fields cropFields(int32_t h, int32_t w, const std::string& method = "bilinear",
                         float extrapolation = 0.0f) {
  Fields f;
  f.i32("crop_height", h).i32("crop_width", w).str("method", method);
  f.f32("extrapolation_value", extrapolation);
  return f;
}

inline PluginPtr create(Fields& fields, const char* layer = "crop0") {
  return PluginPtr(creator()->createPlugin(layer, fields.get()));
}

inline PluginTensorDesc desc(const Dims& dims, DataType type,
                             TensorFormat format = TensorFormat::kLINEAR) {
  PluginTensorDesc d;
  d.dims = dims;
  d.type = type;
  d.format = format;
  d.device = DeviceKind::kCPU;
  return d;
}

inline std::vector<uint8_t> serializeToBytes(const IPlugin& p) {
  std::vector<uint8_t> bytes(p.getSerializationSize());
  EXPECT_EQ(p.serialize(bytes.data(), bytes.size()), kPLUGIN_SUCCESS);
  return bytes;
}

// A generator seeded from std::random_device whose seed every failure message shows.
class SeededTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = std::random_device{}();
    rng_.seed(seed_);
    trace_ = std::make_unique<::testing::ScopedTrace>(__FILE__, __LINE__,
                                                      "random seed " + std::to_string(seed_));
  }
  void TearDown() override { trace_.reset(); }
  uint32_t seed_ = 0;
  std::mt19937 rng_;
  std::unique_ptr<::testing::ScopedTrace> trace_;
};

}  // namespace kiln::testing
