// The ONNX importer emits plain layers and the builder's passes optimise, so a network built with
// the C++ API and the same network from ONNX get the same plan: the same steps (layer types,
// parameters, tensor dims, types and formats, plugin bytes) and the same weights. Tactic names
// and timings are the builder's measurements and may differ from build to build.
//
// Two demo detectors exist: tools/demo_network.cpp's (C++ API; 16 and 32 channels, weights from
// std::normal_distribution) and models/demo_detector.onnx (tools/make_demo_onnx.cpp; 8 and 16
// channels, other weights). They have the same architecture but are not the same network, so
// each is paired with a twin written here from its own weights.
#include <fstream>
#include <sstream>

#include "../tools/demo_network.h"
#include "builder/passes/pass_test_util.h"
#include "core/byte_io.h"
#include "core/plan_codec.h"
#include "kiln/onnx_parser.h"
#include "kiln/plugins.h"
#include "onnx/onnx_pb.h"
#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

void registerPlugins() {
  static const Status registered = PluginRegistry::global().registerLibrary(
      *getBuiltinPluginLibrary(), getBuiltinPluginLibraryPath());
  ASSERT_TRUE(registered.isOk()) << registered.toString();
}

std::string describeSteps(const plan::Plan& p) {
  std::string s;
  for (const plan::Step& step : p.steps) s += std::string(layerTypeName(step.type)) + " ";
  return s;
}

std::vector<uint8_t> paramBytes(const plan::Step& s) {
  std::vector<uint8_t> bytes;
  ByteWriter w(bytes);
  EXPECT_TRUE(plan::writeLayerParams(w, s.type, s.params).isOk());
  return bytes;
}

void expectSameTensor(const plan::Plan& a, int32_t ia, const plan::Plan& b, int32_t ib,
                      const std::string& where) {
  const plan::Tensor &x = a.tensors[size_t(ia)], &y = b.tensors[size_t(ib)];
  EXPECT_EQ(x.dims, y.dims) << where;
  EXPECT_EQ(x.type, y.type) << where;
  EXPECT_EQ(x.format, y.format) << where;
  ASSERT_EQ(x.kind, y.kind) << where;
  if (x.kind != plan::TensorKind::kCONSTANT) return;
  const std::vector<uint8_t>&u = *a.weights[size_t(x.weightIndex)],
        &v = *b.weights[size_t(y.weightIndex)];
  ASSERT_EQ(u.size(), v.size()) << where;
  if (x.type != DataType::kFLOAT) {
    EXPECT_EQ(u, v) << where;
    return;
  }
  for (size_t k = 0; k < u.size() / 4; ++k) {
    float p, q;
    std::memcpy(&p, u.data() + 4 * k, 4);
    std::memcpy(&q, v.data() + 4 * k, 4);
    // Within float rounding: a few units in the last place.
    ASSERT_NEAR(p, q, 4e-7f * std::max(std::fabs(p), std::fabs(q))) << where << " weight " << k;
  }
}

void expectSamePlan(const std::vector<uint8_t>& apiBytes, const std::vector<uint8_t>& onnxBytes) {
  const plan::Plan a = readPlan(apiBytes), b = readPlan(onnxBytes);
  ASSERT_EQ(a.steps.size(), b.steps.size())
      << "API: " << describeSteps(a) << "\nONNX: " << describeSteps(b);
  for (size_t s = 0; s < a.steps.size(); ++s) {
    const plan::Step &x = a.steps[s], &y = b.steps[s];
    const std::string where =
        "step " + std::to_string(s) + " ('" + x.layerName + "' / '" + y.layerName + "')";
    ASSERT_EQ(x.type, y.type) << where;
    if (x.type == LayerType::kPLUGIN) {
      const plan::PluginRecord &p = a.plugins[size_t(x.pluginIndex)],
                               &q = b.plugins[size_t(y.pluginIndex)];
      EXPECT_EQ(p.name, q.name) << where;
      EXPECT_EQ(p.version, q.version) << where;
      EXPECT_EQ(p.data, q.data) << where << ": the serialized plugin";
    } else {
      EXPECT_EQ(paramBytes(x), paramBytes(y)) << where << ": parameters";
    }
    ASSERT_EQ(x.inputs.size(), y.inputs.size()) << where;
    ASSERT_EQ(x.outputs.size(), y.outputs.size()) << where;
    for (size_t i = 0; i < x.inputs.size(); ++i)
      expectSameTensor(a, x.inputs[i], b, y.inputs[i], where + " input " + std::to_string(i));
    for (size_t o = 0; o < x.outputs.size(); ++o)
      expectSameTensor(a, x.outputs[o], b, y.outputs[o], where + " output " + std::to_string(o));
  }
  ASSERT_EQ(a.inputs.size(), b.inputs.size());
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    EXPECT_EQ(a.tensors[size_t(a.inputs[i])].name, b.tensors[size_t(b.inputs[i])].name);
    expectSameTensor(a, a.inputs[i], b, b.inputs[i], "input " + std::to_string(i));
  }
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (size_t o = 0; o < a.outputs.size(); ++o)
    EXPECT_EQ(a.tensors[size_t(a.outputs[o])].name, b.tensors[size_t(b.outputs[o])].name);
}

std::vector<uint8_t> buildOrFail(const INetworkDefinition& net) {
  std::vector<uint8_t> bytes;
  BuilderConfig config = quickConfig();
  if (countNodes(asNetworkImpl(net)->graph(), LayerType::kPLUGIN) > 0) {
    // The plugin's format is chosen by timing (with the reformats it would need), which is a
    // measurement, not structure: pin the demo's CropAndResize to linear fp32 / int32.
    config.pluginCombination = {{DataType::kFLOAT, TensorFormat::kLINEAR},
                                {DataType::kFLOAT, TensorFormat::kLINEAR},
                                {DataType::kINT32, TensorFormat::kLINEAR},
                                {DataType::kFLOAT, TensorFormat::kLINEAR}};
  }
  Status s = createBuilder()->buildSerializedNetwork(net, config, bytes);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return bytes;
}

std::unique_ptr<INetworkDefinition> parseOrFail(const std::string& bytes) {
  auto net = createNetwork();
  Status s = parseOnnxBytes(bytes.data(), bytes.size(), "test", *net);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return net;
}

// Values of a constant input of a layer of the API network.
std::vector<float> layerWeights(const INetworkDefinition& net, const std::string& layer,
                                size_t input) {
  const Graph& g = asNetworkImpl(net)->graph();
  const GraphNode* n = findNode(g, layer);
  EXPECT_NE(n, nullptr) << layer;
  if (!n) return {};
  const GraphTensor& t = g.tensors[size_t(n->inputs.at(input))];
  std::vector<float> v(t.constant->size() / 4);
  std::memcpy(v.data(), t.constant->data(), v.size() * 4);
  return v;
}

void convNode(Model& m, const std::string& name, const std::string& in, const std::string& out,
              int64_t inC, int64_t outC, int64_t stride, const std::vector<float>& w,
              const std::vector<float>& b) {
  m.initFloat(name + ".weight", {outC, inC, 3, 3}, w);
  m.initFloat(name + ".bias", {outC}, b);
  auto& c = m.node("Conv", {in, name + ".weight", name + ".bias"}, {out}, name);
  attrInts(c, "kernel_shape", {3, 3});
  attrInts(c, "pads", {1, 1, 1, 1});
  attrInts(c, "strides", {stride, stride});
}

// The detector head after CropAndResize, in ONNX: Conv + Relu, GlobalAveragePool, Flatten, Gemm,
// Softmax.
void onnxHead(Model& m, const std::string& crops, int64_t channels, const std::vector<float>& hw,
              const std::vector<float>& hb, const std::vector<float>& fw,
              const std::vector<float>& fb) {
  convNode(m, "head", crops, "head.c", channels, 32, 1, hw, hb);
  m.node("Relu", {"head.c"}, {"head.r"});
  m.node("GlobalAveragePool", {"head.r"}, {"pooled"});
  attrInt(m.node("Flatten", {"pooled"}, {"flat"}), "axis", 1);
  m.initFloat("fc.weight", {5, 32}, fw);
  m.initFloat("fc.bias", {5}, fb);
  attrInt(m.node("Gemm", {"flat", "fc.weight", "fc.bias"}, {"logits"}), "transB", 1);
  attrInt(m.node("Softmax", {"logits"}, {"class_scores"}), "axis", 1);
  m.output("class_scores");
}

void onnxCrop(Model& m, const std::string& features, const std::string& out) {
  auto& crop = m.node("CropAndResize", {features, "boxes", "box_indices"}, {out}, "crop");
  crop.set_domain("kiln");
  attrInt(crop, "crop_height", 7);
  attrInt(crop, "crop_width", 7);
  attrString(crop, "method", "bilinear");
  attrFloat(crop, "extrapolation_value", 0.f);
}

TEST(ApiAndOnnxSamePlan, DemoNetwork) {
  ASSERT_NO_FATAL_FAILURE(registerPlugins());
  Status s;
  auto api = demo::buildDemoNetwork(s);
  ASSERT_TRUE(api) << s.toString();

  // The same network in ONNX, with the API network's weights.
  Model m(13);
  m.proto().add_opset_import()->set_domain("kiln");
  m.input("image", {1, 3, demo::kImageSize, demo::kImageSize});
  m.input("boxes", {demo::kBoxes, 4});
  m.input("box_indices", {demo::kBoxes}, onnx::TensorProto::INT32);
  convNode(m, "conv0", "image", "c0", 3, 16, 1, layerWeights(*api, "backbone_conv0", 1),
           layerWeights(*api, "backbone_conv0", 2));
  m.node("Relu", {"c0"}, {"r0"});
  convNode(m, "conv1", "r0", "c1", 16, 32, 2, layerWeights(*api, "backbone_conv1", 1),
           layerWeights(*api, "backbone_conv1", 2));
  m.node("Relu", {"c1"}, {"features"});
  onnxCrop(m, "features", "crops");
  onnxHead(m, "crops", 32, layerWeights(*api, "head_conv", 1), layerWeights(*api, "head_conv", 2),
           layerWeights(*api, "classifier", 1), layerWeights(*api, "classifier", 2));
  auto fromOnnx = parseOrFail(m.bytes());

  const std::vector<uint8_t> a = buildOrFail(*api), b = buildOrFail(*fromOnnx);
  ASSERT_NO_FATAL_FAILURE(expectSamePlan(a, b));
  // Three convolutions with their ReLUs fused in (conv_fusion), the crop, pooling, reshape, gemm
  // and softmax.
  EXPECT_EQ(readPlan(a).steps.size(), 8u) << describeSteps(readPlan(a));
}

// A float initializer of a model, by name.
std::vector<float> initializer(const onnx::ModelProto& model, const std::string& name) {
  for (const auto& t : model.graph().initializer()) {
    if (t.name() != name) continue;
    std::vector<float> v(t.raw_data().size() / 4);
    std::memcpy(v.data(), t.raw_data().data(), v.size() * 4);
    return v;
  }
  ADD_FAILURE() << "no initializer " << name;
  return {};
}

TEST(ApiAndOnnxSamePlan, BundledDemoDetector) {
  ASSERT_NO_FATAL_FAILURE(registerPlugins());
  std::ifstream f(KILN_DEMO_ONNX, std::ios::binary);
  std::stringstream bytes;
  bytes << f.rdbuf();
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(bytes.str())) << KILN_DEMO_ONNX;
  auto fromOnnx = parseOrFail(bytes.str());

  // The same network with the C++ API, from the model's weights.
  auto net = createNetwork();
  ITensor* x = net->addInput("image", DataType::kFLOAT, makeDims({1, 3, 64, 64}));
  ITensor* boxes = net->addInput("boxes", DataType::kFLOAT, makeDims({6, 4}));
  ITensor* indices = net->addInput("box_indices", DataType::kINT32, makeDims({6}));
  auto convRelu = [&](ITensor* in, const std::string& name, int32_t out, int32_t stride) {
    ConvolutionParams p = conv3x3(out);
    p.strideH = p.strideW = stride;
    const auto w = initializer(model, name + ".weight"), b = initializer(model, name + ".bias");
    ILayer* c = net->addConvolution(*in, p, weights(w), weights(b));
    EXPECT_NE(c, nullptr);
    return net->addActivation(*c->getOutput(0), ActivationParams{ActivationType::kRELU})
        ->getOutput(0);
  };
  x = convRelu(x, "backbone.conv1", 8, 1);
  x = convRelu(x, "backbone.conv2", 16, 2);
  const int32_t crop = 7;
  const float zero = 0.f;
  PluginField fields[] = {{"crop_height", &crop, PluginFieldType::kINT32, 1},
                          {"crop_width", &crop, PluginFieldType::kINT32, 1},
                          {"method", "bilinear", PluginFieldType::kSTRING, 8},
                          {"extrapolation_value", &zero, PluginFieldType::kFLOAT32, 1}};
  PluginSpec spec;
  spec.name = "CropAndResize";
  spec.fields = PluginFieldCollection{4, fields};
  ITensor* cropIn[] = {x, boxes, indices};
  ILayer* crops = net->addPlugin(cropIn, 3, spec);
  ASSERT_NE(crops, nullptr) << net->getLastError().toString();
  x = convRelu(crops->getOutput(0), "head.conv", 32, 1);
  PoolingParams gap;
  gap.type = PoolingType::kGLOBAL_AVERAGE;
  x = net->addPooling(*x, gap)->getOutput(0);
  ShuffleParams flat;
  flat.hasReshape = true;
  flat.reshapeDims = makeDims({6, 32});
  x = net->addShuffle(*x, flat)->getOutput(0);
  x = net->addFullyConnected(*x, 5, weights(initializer(model, "head.fc.weight")),
                             weights(initializer(model, "head.fc.bias")))
          ->getOutput(0);
  ILayer* scores = net->addSoftmax(*x, SoftmaxParams{1});
  scores->getOutput(0)->setName("class_scores");
  ASSERT_TRUE(net->markOutput(*scores->getOutput(0)).isOk());

  ASSERT_NO_FATAL_FAILURE(expectSamePlan(buildOrFail(*net), buildOrFail(*fromOnnx)));
}

// scale and shift of BatchNormalization, as the ONNX importer computes them (an op converted to
// kiln's layers, not an optimisation).
void batchNormScaleShift(const std::vector<float>& gamma, const std::vector<float>& beta,
                         const std::vector<float>& mean, const std::vector<float>& var, float eps,
                         std::vector<float>& scale, std::vector<float>& shift) {
  scale.resize(gamma.size());
  shift.resize(gamma.size());
  for (size_t c = 0; c < gamma.size(); ++c) {
    const double s = double(gamma[c]) / std::sqrt(double(var[c]) + eps);
    scale[c] = float(s);
    shift[c] = float(double(beta[c]) - double(mean[c]) * s);
  }
}

void convBatchNormRelu(bool convBias) {
  Rng rng;
  const int64_t k = 6;
  const float eps = 1e-3f;
  const auto w = rng.values(k * 3 * 9), b = rng.values(k), gamma = rng.values(k),
             beta = rng.values(k), mean = rng.values(k), var = rng.values(k, 0.5f, 2.f);

  Model m(13);
  m.input("x", {2, 3, 7, 9});
  m.initFloat("w", {k, 3, 3, 3}, w);
  if (convBias) m.initFloat("b", {k}, b);
  std::vector<std::string> convIn = {"x", "w"};
  if (convBias) convIn.push_back("b");
  auto& conv = m.node("Conv", convIn, {"c"});
  attrInts(conv, "pads", {1, 1, 1, 1});
  attrInts(conv, "kernel_shape", {3, 3});
  m.initFloat("gamma", {k}, gamma);
  m.initFloat("beta", {k}, beta);
  m.initFloat("mean", {k}, mean);
  m.initFloat("var", {k}, var);
  attrFloat(m.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"}), "epsilon",
            eps);
  m.node("Relu", {"bn"}, {"y"});
  m.output("y");
  auto fromOnnx = parseOrFail(m.bytes());

  auto api = createNetwork();
  ITensor* x = api->addInput("x", DataType::kFLOAT, makeDims({2, 3, 7, 9}));
  ILayer* c =
      api->addConvolution(*x, conv3x3(int32_t(k)), weights(w), convBias ? weights(b) : Weights{});
  std::vector<float> scale, shift;
  batchNormScaleShift(gamma, beta, mean, var, eps, scale, shift);
  ILayer* mul = api->addElementwise(
      *c->getOutput(0), *constant(*api, makeDims({1, k, 1, 1}), scale), ElementwiseOp::kMUL);
  ILayer* add = api->addElementwise(
      *mul->getOutput(0), *constant(*api, makeDims({1, k, 1, 1}), shift), ElementwiseOp::kADD);
  ILayer* relu = api->addActivation(*add->getOutput(0), ActivationParams{ActivationType::kRELU});
  relu->getOutput(0)->setName("y");
  ASSERT_TRUE(api->markOutput(*relu->getOutput(0)).isOk());

  const std::vector<uint8_t> a = buildOrFail(*api), o = buildOrFail(*fromOnnx);
  // BatchNorm folded into the convolution, the ReLU fused into it (conv_fusion).
  EXPECT_EQ(stepTypes(readPlan(a)), (std::vector<LayerType>{LayerType::kCONVOLUTION}));
  ASSERT_NO_FATAL_FAILURE(expectSamePlan(a, o));
  expectSameResults(*fromOnnx);
}

TEST(ApiAndOnnxSamePlan, ConvBatchNormRelu) { convBatchNormRelu(true); }
TEST(ApiAndOnnxSamePlan, ConvWithoutBiasBatchNormRelu) { convBatchNormRelu(false); }

}  // namespace
}  // namespace kiln::testing
