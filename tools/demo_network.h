// The bundled demo: a small two-stage detector built with the C++ API. A convolutional backbone
// turns the image into a feature map, CropAndResize crops the given boxes out of it, and a head
// (convolution, global average pooling, fully connected, softmax) scores each box per class.
// Weights are fixed and seeded, so every build of the demo computes the same function.
#pragma once

#include <memory>
#include <vector>

#include "kiln/network.h"

namespace kiln::demo {

constexpr int kImageSize = 64;
constexpr int kBoxes = 6;
constexpr int kClasses = 5;

// The network, or nullptr with `status` set (e.g. when CropAndResize is not registered).
std::unique_ptr<INetworkDefinition> buildDemoNetwork(Status& status);

// The demo's fixed inputs: a synthetic image, six boxes (one flipped, one partly outside the
// image) and their image indices.
struct DemoInputs {
  std::vector<float> image;         // [1, 3, kImageSize, kImageSize]
  std::vector<float> boxes;         // [kBoxes, 4] as (y1, x1, y2, x2)
  std::vector<int32_t> boxIndices;  // [kBoxes]
};
DemoInputs makeDemoInputs();

}  // namespace kiln::demo
