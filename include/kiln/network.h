// Building a network with the C++ API (the ONNX parser builds one through the same calls).
//
// Shapes and types are inferred as each layer is added, so getDimensions() is valid at once. A
// layer that cannot be added (bad shape, missing plugin, plugin failure) returns nullptr; the
// reason is logged and kept in getLastError(), and building such a network fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/layers.h"
#include "kiln/plugin.h"
#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln {

class ITensor {
 public:
  virtual const char* getName() const = 0;
  // Names must be unique in the network; setName fails (returns false) on a clash.
  virtual bool setName(const char* name) = 0;
  virtual Dims getDimensions() const = 0;
  virtual DataType getType() const = 0;
  virtual bool isNetworkInput() const = 0;
  virtual bool isNetworkOutput() const = 0;
  // Network inputs: names dimension `index` (ONNX's dim_param). Inputs' dimensions that share a
  // name must be equal: their profile ranges must overlap at build, their values must match at
  // run time. False for a tensor that is no network input, an index outside its rank, an empty
  // name, or a dimension that is not dynamic (-1).
  virtual bool setDimensionName(int32_t index, const char* name) = 0;
  // The name given to dimension `index`, or nullptr.
  virtual const char* getDimensionName(int32_t index) const = 0;
  // Network inputs of type kINT32 or kINT64 with fixed dims: makes the input a shape-value input
  // (TensorRT's shape tensor input), built for these `count` values in row-major order. The
  // network's layers take their shapes from the values given here (the ONNX parser folds a
  // Reshape's shape, a Slice's bounds, ... from them), and at run time the engine reads the
  // input's values from host memory (the address given to setTensorAddress is host memory on
  // every backend, as in TensorRT) and fails the enqueue, naming input, index and values, when
  // they differ. Values that vary at run time need host evaluation of shape arithmetic, which
  // kiln does not have yet: a plan serves one set of values. False for a tensor that is no such
  // input, a count other than its volume, or a value outside its type.
  virtual bool setShapeValues(const int64_t* values, int64_t count) = 0;
  // The values setShapeValues gave (empty for any other tensor).
  virtual std::vector<int64_t> getShapeValues() const = 0;

 protected:
  ~ITensor() = default;
};

class ILayer {
 public:
  virtual const char* getName() const = 0;
  virtual bool setName(const char* name) = 0;
  virtual LayerType getType() const = 0;
  virtual int32_t getNbInputs() const = 0;
  virtual ITensor* getInput(int32_t index) const = 0;
  virtual int32_t getNbOutputs() const = 0;
  virtual ITensor* getOutput(int32_t index) const = 0;

 protected:
  ~ILayer() = default;
};

// Which plugin a plugin layer uses, and its fields. kiln creates the plugin through the registry
// (so that creation is traced and the namespace is set by the engine) and owns it.
struct PluginSpec {
  const char* name = nullptr;
  const char* version = "1";
  const char* pluginNamespace = "";
  PluginFieldCollection fields;
};

class INetworkDefinition {
 public:
  virtual ~INetworkDefinition() = default;

  // A dimension may be -1: dynamic, given per build by an OptimizationProfile (kiln/builder.h)
  // and per run by IExecutionContext::setInputShape. The input's getDimensions() keeps the -1.
  virtual ITensor* addInput(const char* name, DataType type, const Dims& dims) = 0;
  // kiln: layers are checked as they are added, and their outputs' getDimensions() computed, at
  // one concrete shape of each dynamic input, its working shape: every -1 taken as 1 until this
  // sets another (the ONNX parser sets the first profile's opt). `dims` must keep the input's
  // fixed dimensions. Setting it re-checks every layer and fails, changing nothing, where one
  // does not accept the new shape.
  virtual Status setWorkingShape(const char* inputName, const Dims& dims) = 0;
  // Several inputs at once, {name: dims}: inputs whose dims must agree (a and b of a + b, both
  // [batch, seq]) can only move together.
  virtual Status setWorkingShapes(const std::map<std::string, Dims>& shapes) = 0;
  virtual Status markOutput(ITensor& tensor) = 0;

  virtual ILayer* addConstant(const Dims& dims, const Weights& weights) = 0;
  // kernel: [outChannels, C/groups, kernelH, kernelW]; bias: outChannels values or count 0.
  virtual ILayer* addConvolution(ITensor& input, const ConvolutionParams& params,
                                 const Weights& kernel, const Weights& bias) = 0;
  virtual ILayer* addPooling(ITensor& input, const PoolingParams& params) = 0;
  virtual ILayer* addElementwise(ITensor& a, ITensor& b, ElementwiseOp op) = 0;
  virtual ILayer* addActivation(ITensor& input, const ActivationParams& params) = 0;
  virtual ILayer* addMatrixMultiply(ITensor& a, ITensor& b, const MatrixMultiplyParams& params) = 0;
  // c may be null.
  virtual ILayer* addGemm(ITensor& a, ITensor& b, ITensor* c, const GemmParams& params) = 0;
  // Fully connected on [N, K] input: Y[N, nbOutputs] = X W^T + b; kernel [nbOutputs, K].
  virtual ILayer* addFullyConnected(ITensor& input, int32_t nbOutputs, const Weights& kernel,
                                    const Weights& bias) = 0;
  virtual ILayer* addSoftmax(ITensor& input, const SoftmaxParams& params) = 0;
  virtual ILayer* addConcatenation(ITensor* const* inputs, int32_t nbInputs,
                                   const ConcatenationParams& params) = 0;
  virtual ILayer* addShuffle(ITensor& input, const ShuffleParams& params) = 0;
  // A shuffle whose reshape takes some dims from `dimsSource`'s dims (ShuffleParams::
  // reshapeDimsOf); its data is not read.
  virtual ILayer* addShuffleWithDimsOf(ITensor& input, ITensor& dimsSource,
                                       const ShuffleParams& params) = 0;
  virtual ILayer* addReduce(ITensor& input, const ReduceParams& params) = 0;
  virtual ILayer* addPlugin(ITensor* const* inputs, int32_t nbInputs, const PluginSpec& spec) = 0;
  virtual ILayer* addSelect(ITensor& condition, ITensor& x, ITensor& y) = 0;
  // Converts element type (ONNX Cast): float <-> float, float <-> int32/int64/bool,
  // int8/int32/int64/bool among themselves. Float to integer truncates toward zero and saturates.
  virtual ILayer* addCast(ITensor& input, DataType type) = 0;
  virtual ILayer* addGather(ITensor& data, ITensor& indices, const GatherParams& params) = 0;
  virtual ILayer* addSlice(ITensor& input, const SliceParams& params) = 0;
  virtual ILayer* addPadding(ITensor& input, const PaddingParams& params) = 0;
  virtual ILayer* addResize(ITensor& input, const ResizeParams& params) = 0;
  virtual ILayer* addTile(ITensor& input, const TileParams& params) = 0;
  virtual ILayer* addExpand(ITensor& input, const ExpandParams& params) = 0;
  // kernel: [C, outChannels/groups, kernelH, kernelW]; bias: outChannels values or count 0.
  virtual ILayer* addDeconvolution(ITensor& input, const DeconvolutionParams& params,
                                   const Weights& kernel, const Weights& bias) = 0;
  // scale and bias: [C] tensors (usually constants).
  virtual ILayer* addNormalization(ITensor& input, ITensor& scale, ITensor& bias,
                                   const NormalizationParams& params) = 0;
  virtual ILayer* addLRN(ITensor& input, const LRNParams& params) = 0;
  virtual ILayer* addRoiAlign(ITensor& input, ITensor& rois, ITensor& batchIndices,
                              const RoiAlignParams& params) = 0;

  // Any built-in layer, by its parameters (kiln/ops/<op>.h) and its inputs in the order that
  // header documents, weights given as constant layers: net.addLayer(TriluParams{...}, {&x}).
  // The add methods above are the same with their weights made constants for you.
  template <class Params>
  ILayer* addLayer(const Params& params, std::initializer_list<ITensor*> inputs) {
    return addBuiltinLayer(LayerTypeOf<Params>::value, &params, sizeof(Params), inputs.begin(),
                           static_cast<int32_t>(inputs.size()));
  }
  // The untyped form: `params` points at the parameter struct of `type` (`paramsBytes` its size).
  virtual ILayer* addBuiltinLayer(LayerType type, const void* params, size_t paramsBytes,
                                  ITensor* const* inputs, int32_t nbInputs) = 0;

  virtual int32_t getNbLayers() const = 0;
  virtual ILayer* getLayer(int32_t index) const = 0;
  virtual int32_t getNbInputs() const = 0;
  virtual ITensor* getInput(int32_t index) const = 0;
  virtual int32_t getNbOutputs() const = 0;
  virtual ITensor* getOutput(int32_t index) const = 0;

  // The first error met while adding layers, or ok.
  virtual const Status& getLastError() const = 0;
};

std::unique_ptr<INetworkDefinition> createNetwork();

}  // namespace kiln
