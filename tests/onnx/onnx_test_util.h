// Building small ONNX models in C++ and running them through parse -> build -> plan -> run.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/onnx_parser.h"
#include "onnx/onnx_pb.h"
#include "random_test_util.h"

namespace kiln::testing {

class Model {
 public:
  explicit Model(int64_t opset = 13) {
    model_.set_ir_version(7);
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    graph_ = model_.mutable_graph();
    graph_->set_name("test");
  }
  onnx::GraphProto& graph() { return *graph_; }
  onnx::ModelProto& proto() { return model_; }

  void input(const std::string& name, std::vector<int64_t> dims,
             int32_t type = onnx::TensorProto::FLOAT) {
    auto* vi = graph_->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  }
  void output(const std::string& name) { graph_->add_output()->set_name(name); }
  void initFloat(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& v) {
    auto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  }
  void initInts(const std::string& name, const std::vector<int64_t>& v, bool scalar = false) {
    initInts(name, v, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(v.size())});
  }
  void initInts(const std::string& name, const std::vector<int64_t>& v,
                const std::vector<int64_t>& dims) {
    auto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t x : v) t->add_int64_data(x);
  }
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> in,
                        std::vector<std::string> out, const std::string& name = "") {
    auto* n = graph_->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + std::to_string(graph_->node_size()) : name);
    for (auto& s : in) n->add_input(s);
    for (auto& s : out) n->add_output(s);
    return *n;
  }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
  onnx::GraphProto* graph_;
};

inline onnx::AttributeProto& attr(onnx::NodeProto& n, const std::string& name) {
  auto* a = n.add_attribute();
  a->set_name(name);
  return *a;
}
inline void attrInt(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto& a = attr(n, name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
}
inline void attrFloat(onnx::NodeProto& n, const std::string& name, float v) {
  auto& a = attr(n, name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
}
inline void attrString(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto& a = attr(n, name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
}
inline void attrInts(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto& a = attr(n, name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
}

struct Tensor {
  Dims dims;
  std::vector<float> v;  // any output type, converted to float
};

// Makes axis `axis` of graph input `input` the symbol `name` (a dim_param, as dynamic_axes writes).
inline void symbolic(Model& m, int input, int axis, const std::string& name) {
  auto* d = m.graph()
                .mutable_input(input)
                ->mutable_type()
                ->mutable_tensor_type()
                ->mutable_shape()
                ->mutable_dim(axis);
  d->clear_dim_value();
  d->set_dim_param(name);
}

// a [batch, 4] + b [batch, 4], both dims 0 the symbol "batch", reshaped to [batch, 2, 2] through
// Shape -> Slice -> Concat: the chain a dynamic export writes for x.view(x.shape[0], 2, 2).
inline Model sharedBatchModel() {
  Model m(13);
  m.input("a", {1, 4});
  m.input("b", {1, 4});
  symbolic(m, 0, 0, "batch");
  symbolic(m, 1, 0, "batch");
  m.node("Add", {"a", "b"}, {"s"});
  m.node("Shape", {"s"}, {"shape"});
  m.initInts("zero", {0});
  m.initInts("one", {1});
  m.node("Slice", {"shape", "zero", "one"}, {"n"});
  m.initInts("rest", {2, 2});
  attrInt(m.node("Concat", {"n", "rest"}, {"target"}), "axis", 0);
  m.node("Reshape", {"s", "target"}, {"y"});
  m.output("y");
  return m;
}

inline Status parse(const Model& m, std::unique_ptr<INetworkDefinition>& net,
                    const OnnxParserOptions& options = {}) {
  net = createNetwork();
  const std::string b = m.bytes();
  return parseOnnxBytes(b.data(), b.size(), "test", *net, options);
}

// Parses, builds, runs with fp32 inputs; fills `out` with every output by name (and `planBytes`
// with the plan, when given).
inline Status run(const Model& m, const std::map<std::string, std::vector<float>>& inputs,
                  std::map<std::string, Tensor>& out, std::vector<uint8_t>* planBytes = nullptr,
                  const OnnxParserOptions& options = {}) {
  std::unique_ptr<INetworkDefinition> net;
  KILN_RETURN_IF_ERROR(parse(m, net, options));
  std::vector<uint8_t> local;
  std::vector<uint8_t>& plan = planBytes ? *planBytes : local;
  BuilderConfig config;
  config.timingRuns = 1;
  config.warmupRuns = 0;
  config.allowHalf = false;
  KILN_RETURN_IF_ERROR(createBuilder()->buildSerializedNetwork(*net, config, plan));
  std::unique_ptr<IEngine> engine;
  KILN_RETURN_IF_ERROR(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine));
  std::unique_ptr<IExecutionContext> ctx;
  KILN_RETURN_IF_ERROR(engine->createExecutionContext(ctx));
  std::map<std::string, std::vector<uint8_t>> buffers;
  for (int32_t i = 0; i < engine->getNbIOTensors(); ++i) {
    const char* name = engine->getIOTensorName(i);
    const PluginTensorDesc d = engine->getTensorDesc(name);
    auto& buf = buffers[name];
    buf.resize(size_t(volume(d.dims)) * dataTypeSize(d.type) + 8);
    if (engine->getTensorIOMode(name) == TensorIOMode::kINPUT) {
      auto it = inputs.find(name);
      if (it == inputs.end()) return notFound(std::string("no test data for input ") + name);
      if (d.type != DataType::kFLOAT) return unsupported("test inputs must be fp32");
      if (int64_t(it->second.size()) != volume(d.dims)) return invalidArgument("wrong input size");
      std::memcpy(buf.data(), it->second.data(), it->second.size() * 4);
    }
    KILN_RETURN_IF_ERROR(ctx->setTensorAddress(name, buf.data()));
  }
  KILN_RETURN_IF_ERROR(ctx->enqueue(nullptr));
  for (int32_t i = 0; i < engine->getNbIOTensors(); ++i) {
    const char* name = engine->getIOTensorName(i);
    if (engine->getTensorIOMode(name) != TensorIOMode::kOUTPUT) continue;
    const PluginTensorDesc d = engine->getTensorDesc(name);
    Tensor t;
    t.dims = d.dims;
    const uint8_t* p = buffers[name].data();
    for (int64_t k = 0; k < volume(d.dims); ++k) {
      float v = 0;
      switch (d.type) {
        case DataType::kFLOAT:
          std::memcpy(&v, p + 4 * k, 4);
          break;
        case DataType::kINT64: {
          int64_t x;
          std::memcpy(&x, p + 8 * k, 8);
          v = float(x);
          break;
        }
        case DataType::kINT32: {
          int32_t x;
          std::memcpy(&x, p + 4 * k, 4);
          v = float(x);
          break;
        }
        case DataType::kBOOL:
          v = p[k];
          break;
        default:
          return unsupported("output type not handled by the test");
      }
      t.v.push_back(v);
    }
    out[name] = t;
  }
  return Status::ok();
}

// True when a failure comes from a layer whose kernel has not landed yet.
inline bool pendingKernel(const Status& s) {
  return s.message().find("not implemented yet") != std::string::npos;
}

inline void expectNear(const std::vector<float>& got, const std::vector<float>& want, float tol,
                       unsigned seed) {
  ASSERT_EQ(got.size(), want.size()) << "seed " << seed;
  for (size_t k = 0; k < got.size(); ++k) {
    const float bound = tol * std::max(1.f, std::fabs(want[k]));
    ASSERT_NEAR(got[k], want[k], bound) << "element " << k << ", seed " << seed;
  }
}

}  // namespace kiln::testing
