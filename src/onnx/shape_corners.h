// Shape-generic import with optimization profiles, driven by the profiles' corners.
//
// Why corners: the importers fold shape arithmetic (Shape -> Gather -> Concat -> Reshape,
// Flatten's products, a -1 resolved against the input's volume, ...) to numbers at parse time, so
// a network parsed at one shape bakes that shape in. With profiles the model is first parsed
// statically at every distinct corner (each profile's min, opt and max), each parse recording,
// per ONNX node (by its index), what the shape-consuming importers computed. The final parse
// (dynamic inputs, working shape profile 0's opt) reads those records: a value that changes
// between the corners depends on the input shapes. A reshape dim that does becomes 0 (copy the
// input's dim) where it equals the input's at every corner, else the one -1 (inferred); an expand
// dim becomes 1 (keep the input's); a slice dim that reads to the end of its axis at every corner
// becomes -1 (to the end), and a slice start a fixed count before the end at every corner counts
// from the end (SliceParams::startFromEnd). Anything else that does (another moving slice start,
// a resize's output dims, a shape operand of a layer, a constant made into a network tensor) is
// refused, since kiln does not carry general shape arithmetic to run time. Last, verify() re-infers
// the final network at every corner: each layer output must have the dims the static parse there
// gave it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "onnx/import_context.h"

namespace kiln::onnx_import {

// The shapes of the model's dynamic inputs at one corner of a profile's box.
struct Corner {
  std::string label;  // "profile 0's min": the first profile and selector giving it
  std::map<std::string, Dims> shapes;  // per dynamic graph input
};

class ShapeCorners {
 public:
  // `corners` distinct; corners[working] is the final parse's working shape (profile 0's opt).
  ShapeCorners(std::vector<Corner> corners, size_t working);
  const std::vector<Corner>& corners() const { return corners_; }
  const Corner& working() const { return corners_[working_]; }

  // The static parse at corner c records from now on; endCorner keeps its layers' output dims.
  void beginCorner(size_t c);
  void endCorner(const INetworkDefinition& net);
  // The final parse reads the records.
  void beginFinal();

  // After the first round of corner parses: which nodes must make layers (values that depend on
  // the input shapes, computed from constants and read as data: Range(0, sequence) into a
  // Gather, ConstantOfShape into a Trilu), and which of each node's inputs it reads as tensors.
  // True when there are any: the corners are then parsed again with them, so that the corner
  // networks line up layer for layer with the final one.
  bool chooseLayerNodes(const onnx::GraphProto& graph);
  bool makesLayers(int32_t node) const { return layerNodes_.count(node) > 0; }
  bool readsAsTensor(int32_t node, int32_t input) const;

  // NodeContext's reshapeDims, expandShape, literal, sliceParams and dimsFromInputs
  // (onnx/import_context.h).
  Status reshapeDims(NodeContext& n, const Dims& in, Dims& dims, DimsSource* source);
  Status expandShape(NodeContext& n, const Dims& in, Dims& shape, DimsSource* source);
  Status literal(NodeContext& n, const std::string& what, const std::vector<int64_t>& values);
  Status sliceParams(NodeContext& n, const Dims& in, SliceParams& p, const std::string& whose,
                     DimsSource* source);
  Status dimsFromInputs(NodeContext& n, const std::string& what, const Dims& dims,
                        DimsSource& source);
  bool isFinal() const { return final_; }
  // After each node. Corner parses remember its constant outputs; the final parse refuses a node
  // that makes a layer from a constant input that differs between the corners.
  Status afterNode(NodeContext& n);
  // A constant made into a network tensor named `name`: refused in the final parse when it
  // differs between the corners, unless every element is one value at every corner and the node
  // reading it broadcasts (ConstantOfShape's zeros into a Where, say): then `asOnes` says to make
  // it that value at dims of 1, which the node broadcasts to the dims its other inputs give
  // (verify() checks at every corner that the outputs' dims are the static parse's).
  Status materialize(const ImportContext& ctx, const std::string& name, const ConstTensor& c,
                     bool& asOnes);
  // The network's layer `index` is such a constant at dims of 1: verify() leaves it out (its
  // reader's outputs are what must agree).
  void madeAsOnes(int32_t index) { asOnesLayers_.insert(index); }
  // The final network, re-inferred at each corner, against the static parse there; the working
  // shapes are profile 0's opt again afterwards.
  Status verify(INetworkDefinition& net);

 private:
  struct Snapshot {
    uint64_t hash = 0;
    std::string text;      // the values, abbreviated, for messages
    bool uniform = false;  // every element is `first`
    uint64_t first = 0;    // the first element's bits (with the type)
  };
  struct Record {
    std::map<std::pair<int32_t, std::string>, std::vector<int64_t>> sites;  // (node, key)
    std::unordered_map<std::string, Snapshot> values;  // node outputs known at parse time
    std::unordered_map<std::string, std::vector<Snapshot>> materialized;
    std::vector<std::vector<Dims>> layers;  // per layer, its outputs' dims
  };
  static Snapshot snapshot(const ConstTensor& c);
  // Per corner, a snapshot or none (nullptr); their values, for messages, in `text`. True when
  // they differ, a corner without one counting as different; `any`: some corner has one.
  static bool snapshotsDiffer(const std::vector<const Snapshot*>& at,
                              std::vector<std::string>& text, bool& any);
  // What a shape-consuming importer computed (`result`) from `in`, at site `key` of n: recorded
  // while parsing a corner; in the final parse, every corner's record of both.
  Status resultAndInput(NodeContext& n, const std::string& key, const Dims& in, const Dims& result,
                        std::vector<std::vector<int64_t>>& results,
                        std::vector<std::vector<int64_t>>& ins);
  void record(const NodeContext& n, const std::string& key, std::vector<int64_t> v);
  // Per corner, the values recorded at (n, key); an error when a corner has none.
  Status recorded(const NodeContext& n, const std::string& key,
                  std::vector<std::vector<int64_t>>& out) const;
  // Whether constant input i of n is a value of the graph that differs between the corners, and
  // its values at them.
  bool inputVaries(const NodeContext& n, int32_t i, std::string& values) const;
  // "A at profile 0's min, B at profile 0's opt, ..."
  std::string atCorners(const std::vector<std::string>& perCorner) const;
  // The one dynamic input dim (name, axis) that has `values` (per corner) at every corner, for
  // reshape dim k of n; an error when inputs' dims tell it apart from none or more than one.
  Status inputDimWithValues(NodeContext& n, int32_t k, const std::vector<int64_t>& values,
                            std::pair<std::string, int32_t>& found, bool& any) const;
  // Dim k (of `what`, per corner `values`) taken from the one dynamic input dim with those values
  // into `source`; `refusal` (what is wrong) when none has them, an error too when another input
  // is already the source.
  Status takeFromInput(NodeContext& n, const std::string& what, int32_t k,
                       const std::vector<int64_t>& values, const std::string& refusal,
                       DimsSource& source) const;
  // Moves the final network's dynamic inputs to `target`, all at once.
  Status moveTo(INetworkDefinition& net, const Corner& target);

  std::vector<Corner> corners_;
  size_t working_;
  std::vector<Record> records_;
  size_t current_ = 0;
  bool final_ = false;
  std::unordered_map<std::string, size_t> materializedSeen_;  // final parse: uses of each name
  std::set<int32_t> asOnesLayers_;
  std::set<int32_t> layerNodes_;              // chooseLayerNodes
  std::map<int32_t, uint32_t> tensorInputs_;  // per node, a bit per input read as a tensor
};

}  // namespace kiln::onnx_import
