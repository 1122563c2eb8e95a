// Shapes through a graph from its inputs' shapes: what lets one network (and one plan) serve every
// shape of an optimization profile's box. The network API re-infers at a new working shape, the
// builder at each corner of each profile.
#pragma once

#include <map>
#include <string>

#include "builder/graph.h"
#include "kiln/status.h"

namespace kiln {

// Re-runs every layer's shape rule (plugins: getOutputDimensions) in topological order from the
// graph inputs' current shapes, updating every layer output's dims. On failure the error names
// the layer and `graph` is left partly updated: callers work on a copy.
Status inferGraphShapes(Graph& graph);

// Sets each named input's shape (its declared fixed dims must be kept: checked) and re-infers.
// `where` prefixes errors ("profile 0's min").
Status specializeGraph(Graph& graph, const std::map<std::string, Dims>& inputDims,
                       const std::string& where);

// True when some graph input has a dynamic (-1) declared dim.
bool hasDynamicInputs(const Graph& graph);

}  // namespace kiln
