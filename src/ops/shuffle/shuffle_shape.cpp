// The shape and type rule of Shuffle (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {
namespace {

Dims permuteDims(const Dims& d, const int32_t* perm) {
  Dims o;
  o.nbDims = d.nbDims;
  for (int32_t i = 0; i < d.nbDims; ++i) o.d[i] = d.d[perm[i]];
  return o;
}

Status applyReshape(const Dims& reshape, const Dims& t, Dims* o) {
  if (reshape.nbDims < 0 || reshape.nbDims > Dims::kMaxDims)
    return invalidArgument("shuffle: reshape rank " + std::to_string(reshape.nbDims) +
                           " is outside [0, 8]");
  *o = reshape;
  int32_t inferred = -1;
  int64_t known = 1;  // product of the dims other than the inferred one
  for (int32_t i = 0; i < reshape.nbDims; ++i) {
    const int64_t r = reshape.d[i];
    if (r == 0) {
      // TensorRT's placeholder: copy the dim at the same index of the reshape's input.
      if (i >= t.nbDims)
        return invalidArgument("shuffle: reshape dim " + std::to_string(i) +
                               " is 0 (copy the input dim) but the input " + dimsString(t) +
                               " has no dim " + std::to_string(i));
      o->d[i] = t.d[i];
    } else if (r == -1) {
      if (inferred >= 0)
        return invalidArgument("shuffle: reshape dims " + dimsString(reshape) +
                               " have more than one -1");
      inferred = i;
      continue;
    } else if (r < 0) {
      return invalidArgument("shuffle: reshape dims " + dimsString(reshape) + " contain " +
                             std::to_string(r) + "; only -1 may be negative");
    }
    if (o->d[i] != 0 && known > (int64_t{1} << 62) / o->d[i])
      return invalidArgument("shuffle: reshape dims " + dimsString(reshape) + " are too large");
    known *= o->d[i];
  }
  const int64_t v = volume(t);
  if (inferred >= 0) {
    if (known == 0)
      return invalidArgument("shuffle: reshape dims " + dimsString(reshape) +
                             " cannot infer the -1 dim: the other dims have volume 0");
    if (v % known != 0)
      return invalidArgument("shuffle: cannot reshape " + dimsString(t) + " (volume " +
                             std::to_string(v) + ") to " + dimsString(reshape) +
                             ": volume is not a multiple of " + std::to_string(known));
    o->d[inferred] = v / known;
  } else if (known != v) {
    return invalidArgument("shuffle: cannot reshape " + dimsString(t) + " (volume " +
                           std::to_string(v) + ") to " + dimsString(*o) + " (volume " +
                           std::to_string(known) + ")");
  }
  return Status::ok();
}

}  // namespace

const InputCount Shuffle::inputs = {1, 2, "x, dims source"};

Status Shuffle::shapeRule(const ShuffleParams& p, const Shapes& in, Shapes& out) {
  Dims t = in[0].dims;
  std::string why;
  // Reshape dims taken from the second input's dims, resolved before the reshape applies.
  Dims reshape = p.reshapeDims;
  if (!p.hasReshape) reshape.nbDims = 0;
  KILN_RETURN_IF_ERROR(
      shape::dimsFromSource("shuffle", "reshape dim", p.reshapeDimsOf, in, 1, reshape));
  if (p.hasFirstTranspose) {
    if (!shape::isPermutation(p.firstTranspose, t.nbDims, &why))
      return invalidArgument("shuffle: first transpose is not a permutation of the " +
                             std::to_string(t.nbDims) + " input dims: " + why);
    t = permuteDims(t, p.firstTranspose);
  }
  if (p.hasReshape) {
    Dims r;
    KILN_RETURN_IF_ERROR(applyReshape(reshape, t, &r));
    t = r;
  }
  if (p.hasSecondTranspose) {
    if (!shape::isPermutation(p.secondTranspose, t.nbDims, &why))
      return invalidArgument("shuffle: second transpose is not a permutation of the " +
                             std::to_string(t.nbDims) + " reshaped dims: " + why);
    t = permuteDims(t, p.secondTranspose);
  }
  out.assign(1, TensorShape{t, in[0].type});
  return Status::ok();
}

// A shuffle moves elements of any type as they are, floats in whatever precision they have.
bool Shuffle::computeTypes(const ShuffleParams&, std::vector<DataType>&, std::string&) {
  return true;
}

}  // namespace kiln::ops
