// See cudnn_graph_ops.h.
#include "backends/cuda/cudnn_graph_ops.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/recent_cache.h"

namespace kiln::cuda::cudnn_graph {
namespace {

// How many of the heuristic's configurations to try before giving up.
constexpr int64_t kMaxConfigs = 16;

// Why the engine of configuration `cfg` is not allowed for `type`, or "" when it is.
std::string numericsRefusal(cudnnBackendDescriptor_t cfg, DataType type) {
  Descriptor engine;
  if (!engine.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR)) return "cannot describe its engine";
  int64_t count = 0;
  if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                               &count, engine.address()) != CUDNN_STATUS_SUCCESS)
    return "cannot read its engine";
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t nbNotes = 0;
  if (cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                               CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &nbNotes,
                               notes) != CUDNN_STATUS_SUCCESS)
    return "cannot read its numerical notes";
  for (int64_t i = 0; i < nbNotes; ++i) {
    switch (notes[i]) {
      case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC:
        return "nondeterministic";
      case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
        return "reduced-precision accumulation";
      case CUDNN_NUMERICAL_NOTE_TENSOR_CORE:
      case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS:
        if (type == DataType::kFLOAT) return "TF32 or down-converted FP32";
        break;
      default:
        break;
    }
  }
  return "";
}

// The cuDNN pointwise mode computing an activation, with its clips for the ReLU modes.
struct PointwiseActivation {
  cudnnPointwiseMode_t mode = CUDNN_POINTWISE_RELU_FWD;
  bool relu = false;  // the clip attributes below apply
  float lowerClip = 0.f, upperClip = 0.f, lowerSlope = 0.f;
  bool hasUpperClip = false;
};

bool pointwiseActivation(ActivationType type, float alpha, float beta, PointwiseActivation& a) {
  switch (type) {
    case ActivationType::kRELU:
      a.relu = true;
      return true;
    case ActivationType::kLEAKY_RELU:  // below the lower clip 0: 0 + slope * (x - 0)
      a.relu = true;
      a.lowerSlope = alpha;
      return true;
    case ActivationType::kCLIP:  // min(max(x, alpha), beta): slope 0 below, capped above
      if (!(alpha <= beta)) return false;
      a.relu = true;
      a.lowerClip = alpha;
      a.upperClip = beta;
      a.hasUpperClip = true;
      return true;
    case ActivationType::kSIGMOID:
      a.mode = CUDNN_POINTWISE_SIGMOID_FWD;
      return true;
    case ActivationType::kTANH:
      a.mode = CUDNN_POINTWISE_TANH_FWD;
      return true;
    case ActivationType::kGELU:
      a.mode = CUDNN_POINTWISE_GELU_FWD;
      return true;
    case ActivationType::kGELU_TANH:
      a.mode = CUDNN_POINTWISE_GELU_APPROX_TANH_FWD;
      return true;
    case ActivationType::kSILU:  // x * sigmoid(beta x) with cuDNN's default beta, 1
      a.mode = CUDNN_POINTWISE_SWISH_FWD;
      return true;
    default:
      return false;
  }
}

// A pointwise operation y = mode(x) or y = mode(x, b), computed in FP32.
Status makePointwise(Descriptor& op, Descriptor& pw, cudnnPointwiseMode_t mode,
                     const PointwiseActivation* clips, Descriptor& x, Descriptor* b,
                     Descriptor& y) {
  KILN_RETURN_IF_ERROR(pw.create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR));
  const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
  KILN_RETURN_IF_ERROR(set(pw.get(), CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode));
  KILN_RETURN_IF_ERROR(
      set(pw.get(), CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &precision));
  if (clips && clips->relu) {
    KILN_RETURN_IF_ERROR(
        set(pw.get(), CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_TYPE_FLOAT, &clips->lowerClip));
    KILN_RETURN_IF_ERROR(set(pw.get(), CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_FLOAT,
                             &clips->lowerSlope));
    if (clips->hasUpperClip)
      KILN_RETURN_IF_ERROR(
          set(pw.get(), CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_FLOAT, &clips->upperClip));
  }
  KILN_CUDNN_CHECK(cudnnBackendFinalize(pw.get()));
  const cudnnBackendAttributeType_t desc = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  KILN_RETURN_IF_ERROR(op.create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR));
  KILN_RETURN_IF_ERROR(
      set(op.get(), CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, desc, pw.address()));
  KILN_RETURN_IF_ERROR(set(op.get(), CUDNN_ATTR_OPERATION_POINTWISE_XDESC, desc, x.address()));
  if (b)
    KILN_RETURN_IF_ERROR(set(op.get(), CUDNN_ATTR_OPERATION_POINTWISE_BDESC, desc, b->address()));
  KILN_RETURN_IF_ERROR(set(op.get(), CUDNN_ATTR_OPERATION_POINTWISE_YDESC, desc, y.address()));
  KILN_CUDNN_CHECK(cudnnBackendFinalize(op.get()));
  return Status::ok();
}

constexpr int64_t kMaxPackTensors = 8;
using PackKey = WordKey<2 * kMaxPackTensors + 1>;

Status makeVariantPack(Descriptor& pack, const int64_t* uids, void* const* pointers, int64_t count,
                       void* workspace) {
  KILN_RETURN_IF_ERROR(pack.create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR));
  KILN_RETURN_IF_ERROR(
      set(pack.get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids, count));
  KILN_RETURN_IF_ERROR(
      set(pack.get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers, count));
  KILN_RETURN_IF_ERROR(
      set(pack.get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace));
  KILN_CUDNN_CHECK(cudnnBackendFinalize(pack.get()));
  return Status::ok();
}

}  // namespace

bool runtimeFusionEnabled() {
  const char* v = std::getenv("KILN_CUDNN_FUSION");
  return !v || std::string(v) != "0";
}

Descriptor::~Descriptor() {
  if (d_) cudnnBackendDestroyDescriptor(d_);
}

Status Descriptor::create(cudnnBackendDescriptorType_t type) {
  KILN_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d_));
  return Status::ok();
}

Status setAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                    cudnnBackendAttributeType_t type, int64_t count, const void* values) {
  KILN_CUDNN_CHECK(cudnnBackendSetAttribute(d, name, type, count, values));
  return Status::ok();
}

Status makeTensor(Descriptor& t, cudnnDataType_t type, int64_t uid,
                  std::initializer_list<int64_t> dims, std::initializer_list<int64_t> strides,
                  bool isVirtual) {
  KILN_RETURN_IF_ERROR(t.create(CUDNN_BACKEND_TENSOR_DESCRIPTOR));
  const auto rank = static_cast<int64_t>(dims.size());
  KILN_RETURN_IF_ERROR(set(t.get(), CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type));
  KILN_RETURN_IF_ERROR(
      set(t.get(), CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.begin(), rank));
  KILN_RETURN_IF_ERROR(
      set(t.get(), CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.begin(), rank));
  KILN_RETURN_IF_ERROR(set(t.get(), CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid));
  KILN_RETURN_IF_ERROR(
      set(t.get(), CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &kAlignment));
  if (isVirtual)
    KILN_RETURN_IF_ERROR(
        set(t.get(), CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &isVirtual));
  KILN_CUDNN_CHECK(cudnnBackendFinalize(t.get()));
  return Status::ok();
}

bool hasPointwiseActivation(ActivationType activation, float alpha, float beta) {
  PointwiseActivation a;
  return pointwiseActivation(activation, alpha, beta, a);
}

Status appendEpilogue(Epilogue& e, cudnnDataType_t ioType, Descriptor& main, Descriptor& y,
                      std::initializer_list<int64_t> yDims, std::initializer_list<int64_t> yStrides,
                      std::initializer_list<int64_t> biasDims,
                      std::initializer_list<int64_t> biasStrides, int64_t biasUid,
                      int64_t residualUid, int64_t firstVirtualUid,
                      std::vector<cudnnBackendDescriptor_t>& ops) {
  PointwiseActivation a;
  if (e.activation && !pointwiseActivation(e.type, e.alpha, e.beta, a))
    return unsupported("cuDNN has no pointwise mode for this activation");
  const int steps = int(e.bias) + int(e.residual) + int(e.activation);
  if (steps == 0) return invalidArgument("an epilogue needs a bias, residual or activation");
  Descriptor* current = &main;
  int virtuals = 0;
  // The output of step `e.count`: y for the last step, else a fresh virtual FP32 tensor.
  auto output = [&](Descriptor*& out) -> Status {
    if (e.count + 1 == steps) {
      out = &y;
      return Status::ok();
    }
    out = &e.virtuals[virtuals];
    return makeTensor(*out, CUDNN_DATA_FLOAT, firstVirtualUid + virtuals++, yDims, yStrides, true);
  };
  auto step = [&](cudnnPointwiseMode_t mode, const PointwiseActivation* clips,
                  Descriptor* b) -> Status {
    Descriptor* out = nullptr;
    KILN_RETURN_IF_ERROR(output(out));
    KILN_RETURN_IF_ERROR(
        makePointwise(e.ops[e.count], e.modes[e.count], mode, clips, *current, b, *out));
    ops.push_back(e.ops[e.count].get());
    ++e.count;
    current = out;
    return Status::ok();
  };
  if (e.bias) {
    KILN_RETURN_IF_ERROR(makeTensor(e.biasTensor, ioType, biasUid, biasDims, biasStrides));
    KILN_RETURN_IF_ERROR(step(CUDNN_POINTWISE_ADD, nullptr, &e.biasTensor));
  }
  if (e.residual) {
    KILN_RETURN_IF_ERROR(makeTensor(e.residualTensor, ioType, residualUid, yDims, yStrides));
    KILN_RETURN_IF_ERROR(step(CUDNN_POINTWISE_ADD, nullptr, &e.residualTensor));
  }
  if (e.activation) KILN_RETURN_IF_ERROR(step(a.mode, &a, nullptr));
  return Status::ok();
}

Status makePlan(cudnnHandle_t h, const std::vector<cudnnBackendDescriptor_t>& ops, DataType type,
                int rank, Descriptor& plan, size_t& workspace) {
  const cudnnBackendAttributeType_t desc = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  Descriptor graph, heur;
  KILN_RETURN_IF_ERROR(graph.create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
  KILN_RETURN_IF_ERROR(set(graph.get(), CUDNN_ATTR_OPERATIONGRAPH_OPS, desc, ops.data(),
                           static_cast<int64_t>(ops.size())));
  KILN_RETURN_IF_ERROR(set(graph.get(), CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &h));
  KILN_CUDNN_CHECK(cudnnBackendFinalize(graph.get()));

  KILN_RETURN_IF_ERROR(heur.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR));
  const cudnnBackendHeurMode_t heurMode = CUDNN_HEUR_MODE_A;
  KILN_RETURN_IF_ERROR(
      set(heur.get(), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, desc, graph.address()));
  KILN_RETURN_IF_ERROR(
      set(heur.get(), CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &heurMode));
  KILN_CUDNN_CHECK(cudnnBackendFinalize(heur.get()));
  int64_t available = 0;
  KILN_CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, desc, 0,
                                            &available, nullptr));
  const int64_t wanted = std::min(available, kMaxConfigs);
  std::vector<Descriptor> configs(static_cast<size_t>(wanted));
  std::vector<cudnnBackendDescriptor_t> raw;
  for (Descriptor& d : configs) {
    KILN_RETURN_IF_ERROR(d.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw.push_back(d.get());
  }
  int64_t returned = 0;
  if (wanted > 0)
    KILN_CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, desc,
                                              wanted, &returned, raw.data()));
  std::string tried;
  int usable = 0;
  for (int64_t i = 0; i < returned; ++i) {
    const std::string refusal = numericsRefusal(raw[size_t(i)], type);
    if (!refusal.empty()) {
      tried += " engine config " + std::to_string(i) + ": " + refusal + ";";
      continue;
    }
    Descriptor candidate;
    KILN_RETURN_IF_ERROR(candidate.create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR));
    KILN_RETURN_IF_ERROR(
        set(candidate.get(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &h));
    KILN_RETURN_IF_ERROR(
        set(candidate.get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, desc, &raw[size_t(i)]));
    if (cudnnBackendFinalize(candidate.get()) != CUDNN_STATUS_SUCCESS) {
      tried += " engine config " + std::to_string(i) + ": does not finalize;";
      continue;
    }
    int64_t bytes = 0, n = 0;
    KILN_CUDNN_CHECK(cudnnBackendGetAttribute(candidate.get(),
                                              CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                              CUDNN_TYPE_INT64, 1, &n, &bytes));
    if (bytes > kMaxWorkspace) {
      tried += " engine config " + std::to_string(i) + ": needs " + std::to_string(bytes) +
               " bytes of workspace;";
      continue;
    }
    if (usable++ < rank) continue;  // a lower rank's tactic takes that one
    workspace = static_cast<size_t>(bytes);
    std::swap(*plan.address(), *candidate.address());
    return Status::ok();
  }
  if (usable > 0)
    return unsupported("cuDNN's heuristic offers " + std::to_string(usable) +
                       " usable engine(s), this tactic takes the one of rank " +
                       std::to_string(rank));
  return unsupported("cuDNN's heuristic offers no usable engine among " + std::to_string(returned) +
                     (tried.empty() ? "" : ":" + tried));
}

Status execute(cudnnHandle_t handle, const Descriptor& plan, const int64_t* uids,
               void* const* pointers, int64_t count, void* workspace, const char* tactic) {
  if (count < 0 || count > kMaxPackTensors)
    return invalidArgument(std::string(tactic) + ": " + std::to_string(count) +
                           " tensors in one variant pack");
  for (int64_t i = 0; i < count; ++i)
    if (reinterpret_cast<uintptr_t>(pointers[i]) % kAlignment != 0)
      return invalidArgument(std::string(tactic) +
                             ": a tensor is not 16-byte aligned, as its execution plan needs");
  // The variant pack holds only the call's pointers, ids and workspace: the last pack made on this
  // thread for the same ones is used again (recent_cache.h), so a context's enqueues after its
  // first neither allocate nor finalize one.
  PackKey key;
  for (int64_t i = 0; i < count; ++i) {
    key.push(static_cast<uint64_t>(uids[i]));
    key.push(reinterpret_cast<uintptr_t>(pointers[i]));
  }
  key.push(reinterpret_cast<uintptr_t>(workspace));
  thread_local RecentCache<PackKey, Descriptor, 64> packs;
  Status made = Status::ok();
  Descriptor* pack = packs.get(key, [&](Descriptor& d) {
    made = makeVariantPack(d, uids, pointers, count, workspace);
    return made.isOk();
  });
  if (!pack) return made;
  KILN_CUDNN_CHECK(cudnnBackendExecute(handle, plan.get(), pack->get()));
  return Status::ok();
}

}  // namespace kiln::cuda::cudnn_graph
