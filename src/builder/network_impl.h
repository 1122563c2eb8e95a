// The concrete network behind INetworkDefinition: the graph IR plus the handles users hold.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "builder/graph.h"
#include "kiln/network.h"

namespace kiln {

class NetworkImpl;

class TensorImpl final : public ITensor {
 public:
  TensorImpl(NetworkImpl& net, int32_t index) : net_(net), index_(index) {}
  const char* getName() const override;
  bool setName(const char* name) override;
  Dims getDimensions() const override;
  DataType getType() const override;
  bool isNetworkInput() const override;
  bool isNetworkOutput() const override;
  bool setDimensionName(int32_t index, const char* name) override;
  const char* getDimensionName(int32_t index) const override;
  bool setShapeValues(const int64_t* values, int64_t count) override;
  std::vector<int64_t> getShapeValues() const override;
  int32_t index() const { return index_; }
  const NetworkImpl& network() const { return net_; }

 private:
  NetworkImpl& net_;
  int32_t index_;
};

class LayerImpl final : public ILayer {
 public:
  LayerImpl(NetworkImpl& net, int32_t index) : net_(net), index_(index) {}
  const char* getName() const override;
  bool setName(const char* name) override;
  LayerType getType() const override;
  int32_t getNbInputs() const override;
  ITensor* getInput(int32_t index) const override;
  int32_t getNbOutputs() const override;
  ITensor* getOutput(int32_t index) const override;

 private:
  NetworkImpl& net_;
  int32_t index_;
};

class NetworkImpl final : public INetworkDefinition {
 public:
  NetworkImpl() = default;
  ~NetworkImpl() override;

  ITensor* addInput(const char* name, DataType type, const Dims& dims) override;
  Status markOutput(ITensor& tensor) override;
  Status setWorkingShape(const char* inputName, const Dims& dims) override;
  Status setWorkingShapes(const std::map<std::string, Dims>& shapes) override;
  ILayer* addConstant(const Dims& dims, const Weights& weights) override;
  ILayer* addConvolution(ITensor& input, const ConvolutionParams& params, const Weights& kernel,
                         const Weights& bias) override;
  ILayer* addPooling(ITensor& input, const PoolingParams& params) override;
  ILayer* addElementwise(ITensor& a, ITensor& b, ElementwiseOp op) override;
  ILayer* addActivation(ITensor& input, const ActivationParams& params) override;
  ILayer* addMatrixMultiply(ITensor& a, ITensor& b, const MatrixMultiplyParams& params) override;
  ILayer* addGemm(ITensor& a, ITensor& b, ITensor* c, const GemmParams& params) override;
  ILayer* addFullyConnected(ITensor& input, int32_t nbOutputs, const Weights& kernel,
                            const Weights& bias) override;
  ILayer* addSoftmax(ITensor& input, const SoftmaxParams& params) override;
  ILayer* addConcatenation(ITensor* const* inputs, int32_t nbInputs,
                           const ConcatenationParams& params) override;
  ILayer* addShuffle(ITensor& input, const ShuffleParams& params) override;
  ILayer* addShuffleWithDimsOf(ITensor& input, ITensor& dimsSource,
                               const ShuffleParams& params) override;
  ILayer* addReduce(ITensor& input, const ReduceParams& params) override;
  ILayer* addPlugin(ITensor* const* inputs, int32_t nbInputs, const PluginSpec& spec) override;
  ILayer* addSelect(ITensor& condition, ITensor& x, ITensor& y) override;
  ILayer* addCast(ITensor& input, DataType type) override;
  ILayer* addGather(ITensor& data, ITensor& indices, const GatherParams& params) override;
  ILayer* addSlice(ITensor& input, const SliceParams& params) override;
  ILayer* addPadding(ITensor& input, const PaddingParams& params) override;
  ILayer* addResize(ITensor& input, const ResizeParams& params) override;
  ILayer* addTile(ITensor& input, const TileParams& params) override;
  ILayer* addExpand(ITensor& input, const ExpandParams& params) override;
  ILayer* addDeconvolution(ITensor& input, const DeconvolutionParams& params, const Weights& kernel,
                           const Weights& bias) override;
  ILayer* addNormalization(ITensor& input, ITensor& scale, ITensor& bias,
                           const NormalizationParams& params) override;
  ILayer* addLRN(ITensor& input, const LRNParams& params) override;
  ILayer* addRoiAlign(ITensor& input, ITensor& rois, ITensor& batchIndices,
                      const RoiAlignParams& params) override;
  ILayer* addBuiltinLayer(LayerType type, const void* params, size_t paramsBytes,
                          ITensor* const* inputs, int32_t nbInputs) override;

  int32_t getNbLayers() const override { return static_cast<int32_t>(layers_.size()); }
  ILayer* getLayer(int32_t index) const override;
  int32_t getNbInputs() const override { return static_cast<int32_t>(graph_.inputs.size()); }
  ITensor* getInput(int32_t index) const override;
  int32_t getNbOutputs() const override { return static_cast<int32_t>(graph_.outputs.size()); }
  ITensor* getOutput(int32_t index) const override;
  const Status& getLastError() const override { return lastError_; }

  const Graph& graph() const { return graph_; }
  Graph& mutableGraph() { return graph_; }
  ITensor* getTensorHandle(int32_t index) const;
  bool renameTensor(int32_t index, const std::string& name);
  bool renameLayer(int32_t index, const std::string& name);

 private:
  // Validates and records a failure; returns nullptr for the caller to hand back.
  std::nullptr_t fail(const Status& status);
  // Index of `tensor` if it belongs to this network, else -1 (with the error recorded).
  int32_t resolve(const ITensor& tensor, const char* what);
  int32_t addConstantTensor(const Dims& dims, const Weights& weights, const std::string& name,
                            Status& status);
  ILayer* addBuiltin(LayerType type, LayerParams params, std::vector<int32_t> inputs);
  // A convolution or deconvolution of input x: its kernel (wDims) and, when given, its bias
  // ([outChannels]) become constant inputs 1 and 2, named after the layer.
  ILayer* addWithWeights(LayerType type, LayerParams params, int32_t x, const Dims& wDims,
                         int32_t outChannels, const Weights& kernel, const Weights& bias);
  ILayer* addNode(GraphNode node, const std::vector<TensorShape>& outputs);
  std::string uniqueLayerName(const std::string& base);
  std::string uniqueTensorName(const std::string& base);

  Graph graph_;
  std::vector<std::unique_ptr<TensorImpl>> tensors_;
  std::vector<std::unique_ptr<LayerImpl>> layers_;
  std::unordered_map<std::string, int32_t> tensorNames_, layerNames_;
  Status lastError_;
};

// The implementation behind a public network, or nullptr if it is not one of kiln's.
const NetworkImpl* asNetworkImpl(const INetworkDefinition& network);

}  // namespace kiln
