#include "demo_network.h"

#include <cmath>
#include <random>

namespace kiln::demo {
namespace {

// He-style initialisation from a fixed seed: deterministic and well scaled, so the softmax at the
// end is neither saturated nor flat.
std::vector<float> seededWeights(std::mt19937& rng, size_t count, int fanIn) {
  std::normal_distribution<float> normal(0.f, std::sqrt(2.f / static_cast<float>(fanIn)));
  std::vector<float> w(count);
  for (float& v : w) v = normal(rng);
  return w;
}

Weights asWeights(const std::vector<float>& v) {
  return Weights{DataType::kFLOAT, v.data(), static_cast<int64_t>(v.size())};
}

}  // namespace

std::unique_ptr<INetworkDefinition> buildDemoNetwork(Status& status) {
  std::mt19937 rng(2026);
  auto net = createNetwork();
  auto fail = [&]() -> std::unique_ptr<INetworkDefinition> {
    status = net->getLastError().isOk() ? internalError("demo network: a layer failed")
                                        : net->getLastError();
    return nullptr;
  };
  ITensor* image =
      net->addInput("image", DataType::kFLOAT, makeDims({1, 3, kImageSize, kImageSize}));
  ITensor* boxes = net->addInput("boxes", DataType::kFLOAT, makeDims({kBoxes, 4}));
  ITensor* indices = net->addInput("box_indices", DataType::kINT32, makeDims({kBoxes}));
  if (!image || !boxes || !indices) return fail();

  // Backbone: 3 -> 16 -> 32 channels, the second convolution halving the resolution.
  struct ConvSpec {
    int in, out, stride;
  };
  ITensor* x = image;
  int layer = 0;
  for (ConvSpec spec : {ConvSpec{3, 16, 1}, ConvSpec{16, 32, 2}}) {
    ConvolutionParams p;
    p.outChannels = spec.out;
    p.kernelH = p.kernelW = 3;
    p.strideH = p.strideW = spec.stride;
    p.padTop = p.padLeft = p.padBottom = p.padRight = 1;
    auto w = seededWeights(rng, size_t(spec.out) * spec.in * 9, spec.in * 9);
    auto b = seededWeights(rng, spec.out, 64);
    ILayer* conv = net->addConvolution(*x, p, asWeights(w), asWeights(b));
    if (!conv) return fail();
    conv->setName(("backbone_conv" + std::to_string(layer)).c_str());
    ILayer* relu = net->addActivation(*conv->getOutput(0), ActivationParams{ActivationType::kRELU});
    if (!relu) return fail();
    relu->setName(("backbone_relu" + std::to_string(layer++)).c_str());
    x = relu->getOutput(0);
  }

  // Stage two: crop every box to 7x7 from the feature map.
  const int32_t cropSize = 7;
  const char* method = "bilinear";
  const float extrapolation = 0.f;
  PluginField fields[] = {
      {"crop_height", &cropSize, PluginFieldType::kINT32, 1},
      {"crop_width", &cropSize, PluginFieldType::kINT32, 1},
      {"method", method, PluginFieldType::kSTRING, 8},
      {"extrapolation_value", &extrapolation, PluginFieldType::kFLOAT32, 1},
  };
  PluginSpec spec;
  spec.name = "CropAndResize";
  spec.fields = PluginFieldCollection{4, fields};
  ITensor* cropInputs[] = {x, boxes, indices};
  ILayer* crop = net->addPlugin(cropInputs, 3, spec);
  if (!crop) return fail();
  crop->setName("crop");

  // Head: conv + relu on each crop, global average pool, classifier, softmax.
  ConvolutionParams hp;
  hp.outChannels = 32;
  hp.kernelH = hp.kernelW = 3;
  hp.padTop = hp.padLeft = hp.padBottom = hp.padRight = 1;
  auto hw = seededWeights(rng, 32 * 32 * 9, 32 * 9);
  auto hb = seededWeights(rng, 32, 64);
  ILayer* headConv = net->addConvolution(*crop->getOutput(0), hp, asWeights(hw), asWeights(hb));
  if (!headConv) return fail();
  headConv->setName("head_conv");
  ILayer* headRelu =
      net->addActivation(*headConv->getOutput(0), ActivationParams{ActivationType::kRELU});
  if (!headRelu) return fail();
  PoolingParams gp;
  gp.type = PoolingType::kGLOBAL_AVERAGE;
  ILayer* pool = net->addPooling(*headRelu->getOutput(0), gp);
  if (!pool) return fail();
  pool->setName("head_pool");
  ShuffleParams flat;
  flat.hasReshape = true;
  flat.reshapeDims = makeDims({kBoxes, 32});
  ILayer* flatten = net->addShuffle(*pool->getOutput(0), flat);
  if (!flatten) return fail();
  auto fw = seededWeights(rng, kClasses * 32, 32);
  auto fb = seededWeights(rng, kClasses, 64);
  ILayer* fc =
      net->addFullyConnected(*flatten->getOutput(0), kClasses, asWeights(fw), asWeights(fb));
  if (!fc) return fail();
  fc->setName("classifier");
  ILayer* softmax = net->addSoftmax(*fc->getOutput(0), SoftmaxParams{1});
  if (!softmax) return fail();
  softmax->setName("scores");
  softmax->getOutput(0)->setName("class_scores");
  status = net->markOutput(*softmax->getOutput(0));
  if (!status) return nullptr;
  return net;
}

DemoInputs makeDemoInputs() {
  DemoInputs in;
  const int n = kImageSize;
  in.image.resize(size_t(3) * n * n);
  // Smooth coloured blobs: something a crop can tell apart.
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < n; ++y) {
      for (int x = 0; x < n; ++x) {
        const float fy = float(y) / n, fx = float(x) / n;
        in.image[(size_t(c) * n + y) * n + x] =
            std::sin(6.f * fx + 2.f * c) * std::cos(5.f * fy - c) + 0.5f * fx * fy;
      }
    }
  }
  in.boxes = {
      0.10f,  0.10f, 0.40f, 0.45f,  // top left
      0.50f,  0.55f, 0.95f, 0.90f,  // bottom right
      0.20f,  0.30f, 0.80f, 0.70f,  // centre
      0.70f,  0.60f, 0.30f, 0.20f,  // flipped (y1 > y2, x1 > x2)
      -0.20f, 0.80f, 0.30f, 1.30f,  // partly outside the image
      0.00f,  0.00f, 1.00f, 1.00f,  // the whole image
  };
  in.boxIndices.assign(kBoxes, 0);
  return in;
}

}  // namespace kiln::demo
