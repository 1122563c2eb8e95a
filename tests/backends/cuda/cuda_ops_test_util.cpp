#include "backends/cuda/cuda_ops_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <sstream>

#include "backends/cpu/kernel.h"
#include "backends/cuda/device.h"
#include "backends/cuda/kernel.h"
#include "backends/cuda/library_handles.h"
#include "core/plan.h"
#include "kiln/float16.h"
#include "ops/op_table.h"

namespace kiln::testing {
namespace {

bool isFloat(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16;
}

// A tensor's values independent of storage: floats as fp32, everything else as int64.
struct Values {
  Dims dims;
  DataType type = DataType::kFLOAT;  // logical: kFLOAT for any float type
  std::vector<float> f;
  std::vector<int64_t> i;
};

float roundTo(DataType t, float v) {
  switch (t) {
    case DataType::kHALF:
      return halfToFloat(floatToHalf(v));
    case DataType::kBF16:
      return bf16ToFloat(floatToBf16(v));
    default:
      return v;
  }
}

// Linear index -> memory index of the same element in `format` (rank 4 channels-last: NHWC).
int64_t memoryIndex(const Dims& d, TensorFormat format, int64_t linear) {
  if (format != TensorFormat::kCHANNELS_LAST || d.nbDims != 4) return linear;
  const int64_t C = d.d[1], H = d.d[2], W = d.d[3];
  const int64_t w = linear % W, h = (linear / W) % H, c = (linear / (W * H)) % C,
                n = linear / (W * H * C);
  return ((n * H + h) * W + w) * C + c;
}

std::vector<uint8_t> encode(const Values& v, DataType type, TensorFormat format) {
  const int64_t count = volume(v.dims);
  std::vector<uint8_t> bytes(static_cast<size_t>(count) * dataTypeSize(type));
  for (int64_t e = 0; e < count; ++e) {
    uint8_t* p = bytes.data() + memoryIndex(v.dims, format, e) * dataTypeSize(type);
    switch (type) {
      case DataType::kFLOAT: {
        const float x = v.f[e];
        std::memcpy(p, &x, 4);
        break;
      }
      case DataType::kHALF: {
        const uint16_t x = floatToHalf(v.f[e]);
        std::memcpy(p, &x, 2);
        break;
      }
      case DataType::kBF16: {
        const uint16_t x = floatToBf16(v.f[e]);
        std::memcpy(p, &x, 2);
        break;
      }
      case DataType::kINT8:
        *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(v.i[e]);
        break;
      case DataType::kINT32: {
        const int32_t x = static_cast<int32_t>(v.i[e]);
        std::memcpy(p, &x, 4);
        break;
      }
      case DataType::kINT64:
        std::memcpy(p, &v.i[e], 8);
        break;
      case DataType::kBOOL:
        *p = v.i[e] ? 1 : 0;
        break;
    }
  }
  return bytes;
}

Values decode(const std::vector<uint8_t>& bytes, const Dims& dims, DataType type,
              TensorFormat format) {
  Values v;
  v.dims = dims;
  v.type = isFloat(type) ? DataType::kFLOAT : type;
  const int64_t count = volume(dims);
  (isFloat(type) ? v.f.resize(count) : v.i.resize(count));
  for (int64_t e = 0; e < count; ++e) {
    const uint8_t* p = bytes.data() + memoryIndex(dims, format, e) * dataTypeSize(type);
    switch (type) {
      case DataType::kFLOAT:
        std::memcpy(&v.f[e], p, 4);
        break;
      case DataType::kHALF: {
        uint16_t x;
        std::memcpy(&x, p, 2);
        v.f[e] = halfToFloat(x);
        break;
      }
      case DataType::kBF16: {
        uint16_t x;
        std::memcpy(&x, p, 2);
        v.f[e] = bf16ToFloat(x);
        break;
      }
      case DataType::kINT8:
        v.i[e] = *reinterpret_cast<const int8_t*>(p);
        break;
      case DataType::kINT32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        v.i[e] = x;
        break;
      }
      case DataType::kINT64:
        std::memcpy(&v.i[e], p, 8);
        break;
      case DataType::kBOOL:
        v.i[e] = *p;
        break;
    }
  }
  return v;
}

// The special values of the edge-value pass, in turn: 70000 overflows fp16, 89 and -104 are where
// expf overflows and underflows, 1e-30 is a bf16 value that fp16 flushes to zero.
constexpr float kEdgeValues[] = {0.f,
                                 -0.f,
                                 std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::quiet_NaN(),
                                 70000.f,
                                 -70000.f,
                                 1e-30f,
                                 89.f,
                                 -104.f};

Values randomValues(const OpInput& in, OpValues values, std::mt19937& rng) {
  Values v;
  v.dims = in.dims;
  v.type = isFloat(in.type) ? DataType::kFLOAT : in.type;
  const int64_t count = volume(in.dims);
  if (isFloat(in.type)) {
    std::uniform_real_distribution<float> dist(in.floatLo, in.floatHi);
    v.f.resize(count);
    for (float& x : v.f) x = dist(rng);
    if (values == OpValues::kWithEdges && in.edgeValues) {
      for (int64_t e = 0; e < count; e += 3) v.f[e] = kEdgeValues[(e / 3) % std::size(kEdgeValues)];
    }
  } else if (in.type == DataType::kBOOL) {
    std::uniform_int_distribution<int> dist(0, 1);
    v.i.resize(count);
    for (int64_t& x : v.i) x = dist(rng);
  } else {
    std::uniform_int_distribution<int64_t> dist(in.intLo, std::max(in.intLo, in.intHi - 1));
    v.i.resize(count);
    for (int64_t& x : v.i) x = dist(rng);
  }
  return v;
}

std::string variantName(const OpCase& c, DataType t, TensorFormat f) {
  return c.name + " [" + dataTypeName(t) + " " + formatName(f) + "]";
}

// The CPU reference: the last CPU tactic, FP32 linear, host buffers.
bool runCpuReference(const OpCase& c, const std::vector<Values>& inputs,
                     std::vector<Values>& outputs, std::string& error) {
  KernelConfig config;
  config.type = c.type;
  config.params = c.params;
  std::vector<std::vector<uint8_t>> inBytes;
  std::vector<TensorShape> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DataType t = isFloat(c.inputs[i].type) ? DataType::kFLOAT : c.inputs[i].type;
    inBytes.push_back(encode(inputs[i], t, TensorFormat::kLINEAR));
    config.inputs.push_back({inputs[i].dims, t, TensorFormat::kLINEAR, DeviceKind::kCPU});
    shapes.push_back({inputs[i].dims, t});
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    config.constantInputs.push_back(c.inputs[i].constant ? inBytes[i].data() : nullptr);
  std::vector<TensorShape> outShapes;
  Status s = inferLayerOutputs(c.type, c.params, shapes, outShapes);
  if (!s) {
    error = "shape inference: " + s.message();
    return false;
  }
  for (const TensorShape& o : outShapes)
    config.outputs.push_back({o.dims, o.type, TensorFormat::kLINEAR, DeviceKind::kCPU});
  std::span<const Tactic> tactics = ops::cpuTactics(c.type);
  if (tactics.empty()) {
    error = "the CPU backend has no tactic for this layer";
    return false;
  }
  std::string why;
  KernelPtr kernel = tactics.back().create(config, &why);
  if (!kernel) {
    error = "CPU reference declines: " + why;
    return false;
  }
  std::vector<std::vector<uint8_t>> outBytes;
  std::vector<const void*> ins;
  std::vector<void*> outs;
  for (auto& b : inBytes) ins.push_back(b.data());
  for (const PluginTensorDesc& d : config.outputs)
    outBytes.emplace_back(static_cast<size_t>(plan::tensorBytes(d.dims, d.type)));
  for (auto& b : outBytes) outs.push_back(b.data());
  std::vector<uint8_t> workspace(kernel->workspaceSize() + 64);
  s = kernel->run(ins.data(), outs.data(), workspace.data(), {});
  if (!s) {
    error = "CPU reference run: " + s.message();
    return false;
  }
  outputs.clear();
  for (size_t o = 0; o < outBytes.size(); ++o)
    outputs.push_back(
        decode(outBytes[o], config.outputs[o].dims, config.outputs[o].type, TensorFormat::kLINEAR));
  return true;
}

struct Tolerance {
  float rel, abs;
};

Tolerance toleranceFor(const OpCase& c, DataType t) {
  if (t == DataType::kFLOAT)
    return {c.fp32Rel >= 0 ? c.fp32Rel : 1e-5f, c.fp32Abs >= 0 ? c.fp32Abs : 1e-5f};
  if (t == DataType::kHALF)
    return {c.halfRel >= 0 ? c.halfRel : 4e-3f, c.halfAbs >= 0 ? c.halfAbs : 4e-3f};
  return {c.halfRel >= 0 ? c.halfRel * 8 : 3e-2f, c.halfAbs >= 0 ? c.halfAbs * 8 : 3e-2f};
}

// Compares and returns a failure description ("" when equal within tolerance).
std::string compare(const Values& got, const Values& want, Tolerance tol) {
  std::ostringstream out;
  if (!want.f.empty() || got.type == DataType::kFLOAT) {
    // The values' scale, over finite values only: an infinity would allow any difference.
    float scale = 1.f;
    for (float w : want.f)
      if (std::isfinite(w)) scale = std::max(scale, std::fabs(w));
    int bad = 0;
    for (size_t e = 0; e < want.f.size(); ++e) {
      const float g = got.f[e], w = want.f[e];
      const bool ok = (std::isnan(w) && std::isnan(g)) || (std::isinf(w) && g == w) ||
                      std::fabs(g - w) <= tol.rel * std::fabs(w) + tol.abs * scale;
      if (!ok && bad++ < 5) out << "  element " << e << ": got " << g << ", want " << w << "\n";
    }
    if (bad) out << "  " << bad << " of " << want.f.size() << " elements differ\n";
  } else {
    int bad = 0;
    for (size_t e = 0; e < want.i.size(); ++e) {
      if (got.i[e] != want.i[e] && bad++ < 5)
        out << "  element " << e << ": got " << got.i[e] << ", want " << want.i[e] << "\n";
    }
    if (bad) out << "  " << bad << " of " << want.i.size() << " elements differ\n";
  }
  return out.str();
}

}  // namespace

std::string deviceSkipReason() {
  if (cuda::deviceCount() > 0) return "";
  return cuda::noDeviceReason();
}

int runOpCase(const OpCase& c, OpMode mode, OpValues values) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("case " + c.name + ", seed " + std::to_string(seed) +
               (values == OpValues::kWithEdges ? ", with edge values" : ""));
  std::mt19937 rng(seed);
  std::vector<Values> logical;
  for (const OpInput& in : c.inputs) logical.push_back(randomValues(in, values, rng));

  int ran = 0;
  for (DataType ft : c.floatTypes) {
    // The values every backend sees: rounded to the variant's float type.
    std::vector<Values> inputs = logical;
    for (size_t i = 0; i < inputs.size(); ++i)
      for (float& x : inputs[i].f) x = roundTo(ft, x);
    std::vector<Values> expected;
    std::string error;
    if (!runCpuReference(c, inputs, expected, error)) {
      ADD_FAILURE() << c.name << ": " << error;
      return ran;
    }
    for (TensorFormat fmt : c.formats) {
      const std::string variant = variantName(c, ft, fmt);
      KernelConfig config;
      config.type = c.type;
      config.params = c.params;
      std::vector<std::vector<uint8_t>> inBytes;
      std::vector<TensorShape> shapes;
      for (size_t i = 0; i < inputs.size(); ++i) {
        const OpInput& in = c.inputs[i];
        const DataType t = isFloat(in.type) ? ft : in.type;
        const TensorFormat f = isFloat(in.type) && (!in.constant || in.constantFollowsFormat) &&
                                       in.followsFormat && in.dims.nbDims == 4
                                   ? fmt
                                   : TensorFormat::kLINEAR;
        inBytes.push_back(encode(inputs[i], t, f));
        config.inputs.push_back({in.dims, t, f, DeviceKind::kCUDA});
        shapes.push_back({in.dims, t});
      }
      for (size_t i = 0; i < inputs.size(); ++i)
        config.constantInputs.push_back(c.inputs[i].constant ? inBytes[i].data() : nullptr);
      std::vector<TensorShape> outShapes;
      Status s = inferLayerOutputs(c.type, c.params, shapes, outShapes);
      if (!s) {
        ADD_FAILURE() << variant << ": shape inference: " << s.message();
        continue;
      }
      for (const TensorShape& o : outShapes) {
        const TensorFormat f = isFloat(o.type) && o.dims.nbDims == 4 ? fmt : TensorFormat::kLINEAR;
        config.outputs.push_back({o.dims, o.type, f, DeviceKind::kCUDA});
      }

      bool anyAccepted = false;
      std::string reasons;
      for (const Tactic& tactic : ops::cudaTactics(c.type)) {
        std::string why;
        KernelPtr kernel = tactic.create(config, &why);
        if (!kernel) {
          reasons += std::string("\n    ") + tactic.name + ": " + why;
          continue;
        }
        anyAccepted = true;
        // cuDNN and cuBLAS promise nothing at special values: Winograd and FFT convolutions mix a
        // whole tile, so one infinity turns outputs that never saw it into NaN. The edge-value
        // pass holds kiln's own kernels to the CPU's results.
        if (values == OpValues::kWithEdges && kernel->usesLibraries()) continue;
        std::vector<std::vector<uint8_t>> outBytes;
        for (const PluginTensorDesc& d : config.outputs)
          outBytes.emplace_back(static_cast<size_t>(plan::tensorBytes(d.dims, d.type)), 0xFF);

        if (mode == OpMode::kEmulated) {
          std::vector<const void*> ins;
          std::vector<void*> outs;
          for (auto& b : inBytes) ins.push_back(b.data());
          for (auto& b : outBytes) outs.push_back(b.data());
          std::vector<uint8_t> workspace(kernel->workspaceSize() + 256);
          cuda::RunContext ctx;
          ctx.emulate = true;
          s = kernel->run(ins.data(), outs.data(), workspace.data(), ctx);
          if (s.code() == StatusCode::kUnsupported) continue;  // library or tuned kernel
          if (!s) {
            ADD_FAILURE() << variant << " tactic " << tactic.name << ": " << s.message();
            continue;
          }
        } else {
          std::vector<cuda::DeviceBuffer> dIn(inBytes.size()), dOut(outBytes.size());
          cuda::DeviceBuffer dWork;
          cuda::StreamHandle stream;
          cuda::LibraryHandles libraries;
          std::vector<const void*> ins;
          std::vector<void*> outs;
          s = stream.create();
          for (size_t i = 0; s && i < inBytes.size(); ++i) {
            s = dIn[i].allocate(inBytes[i].size(), "input");
            if (s) s = cuda::copyToDevice(dIn[i].data(), inBytes[i].data(), inBytes[i].size());
            ins.push_back(dIn[i].data());
          }
          for (size_t o = 0; s && o < outBytes.size(); ++o) {
            s = dOut[o].allocate(outBytes[o].size(), "output");
            if (s) s = cuda::copyToDevice(dOut[o].data(), outBytes[o].data(), outBytes[o].size());
            outs.push_back(dOut[o].data());
          }
          if (s) s = dWork.allocate(kernel->workspaceSize(), "workspace");
          if (s && kernel->usesLibraries()) s = libraries.createAll();
          cuda::RunContext ctx;
          ctx.stream = stream.get();
          ctx.libraries = &libraries;
          if (s) s = kernel->run(ins.data(), outs.data(), dWork.data(), ctx);
          if (s) s = cuda::synchronize(stream.get());
          for (size_t o = 0; s && o < outBytes.size(); ++o)
            s = cuda::copyToHost(outBytes[o].data(), dOut[o].data(), outBytes[o].size());
          if (!s) {
            ADD_FAILURE() << variant << " tactic " << tactic.name << ": " << s.message();
            continue;
          }
        }
        ++ran;
        for (size_t o = 0; o < outBytes.size(); ++o) {
          const PluginTensorDesc& d = config.outputs[o];
          Values got = decode(outBytes[o], d.dims, d.type, d.format);
          // Expected values in the output's precision: the CPU computed in fp32.
          Values want = expected[o];
          for (float& x : want.f) x = roundTo(d.type, x);
          const std::string diff = compare(got, want, toleranceFor(c, d.type));
          EXPECT_TRUE(diff.empty()) << variant << " tactic " << tactic.name << " output " << o
                                    << " differs from the CPU reference:\n"
                                    << diff;
        }
      }
      if (!anyAccepted) {
        ADD_FAILURE() << variant << ": no CUDA tactic accepts it:" << reasons;
      }
    }
  }
  return ran;
}

KernelConfig linearConfig(LayerType type, const LayerParams& params,
                          const std::vector<TensorShape>& inputs) {
  KernelConfig c;
  c.type = type;
  c.params = params;
  for (const TensorShape& s : inputs) {
    c.inputs.push_back({s.dims, s.type, TensorFormat::kLINEAR, DeviceKind::kCUDA});
    c.constantInputs.push_back(nullptr);
  }
  std::vector<TensorShape> outs;
  if (inferLayerOutputs(type, params, inputs, outs))
    for (const TensorShape& o : outs)
      c.outputs.push_back({o.dims, o.type, TensorFormat::kLINEAR, DeviceKind::kCUDA});
  return c;
}

std::string bytesAgainstReference(const KernelConfig& c,
                                  const std::vector<std::vector<uint8_t>>& inputs, size_t misalign,
                                  int* ran) {
  *ran = 0;
  std::span<const Tactic> tactics = ops::cudaTactics(c.type);
  if (tactics.empty() || c.outputs.size() != 1) return "no CUDA tactic or no single output";
  const size_t outBytes =
      static_cast<size_t>(plan::tensorBytes(c.outputs[0].dims, c.outputs[0].type));
  cuda::RunContext ctx;
  ctx.emulate = true;
  // Runs `kernel` with every buffer at `shift` bytes past a 16-byte aligned address.
  auto run = [&](const Kernel& kernel, size_t shift, std::vector<uint8_t>& out) -> Status {
    std::vector<std::vector<uint8_t>> in(inputs.size());
    std::vector<const void*> ins;
    for (size_t i = 0; i < inputs.size(); ++i) {
      in[i].resize(inputs[i].size() + shift + 16);
      uint8_t* p = in[i].data();
      p += (16 - reinterpret_cast<uintptr_t>(p) % 16) % 16 + shift;
      std::memcpy(p, inputs[i].data(), inputs[i].size());
      ins.push_back(p);
    }
    std::vector<uint8_t> o(outBytes + shift + 16, 0xFF);
    uint8_t* po = o.data() + (16 - reinterpret_cast<uintptr_t>(o.data()) % 16) % 16 + shift;
    void* outs[] = {po};
    std::vector<uint8_t> workspace(kernel.workspaceSize() + 256);
    uint8_t* pw = workspace.data() + (16 - reinterpret_cast<uintptr_t>(workspace.data()) % 16) % 16;
    const Status s = kernel.run(ins.data(), outs, pw, ctx);
    out.assign(po, po + outBytes);
    return s;
  };
  std::string why;
  KernelPtr reference = tactics.back().create(c, &why);
  if (!reference) return "the reference declines: " + why;
  std::vector<uint8_t> want;
  Status s = run(*reference, 0, want);
  if (!s) return "the reference fails: " + s.message();
  std::ostringstream diff;
  for (size_t t = 0; t + 1 < tactics.size(); ++t) {
    KernelPtr kernel = tactics[t].create(c, &why);
    if (!kernel) continue;
    std::vector<uint8_t> got;
    s = run(*kernel, misalign, got);
    if (s.code() == StatusCode::kUnsupported) continue;
    if (!s) {
      diff << tactics[t].name << " fails: " << s.message() << "\n";
      continue;
    }
    ++*ran;
    size_t bad = 0, first = 0;
    for (size_t b = 0; b < outBytes; ++b)
      if (got[b] != want[b] && bad++ == 0) first = b;
    if (bad)
      diff << tactics[t].name << " (shifted " << misalign << " bytes): " << bad << " of "
           << outBytes << " bytes differ from the reference's, the first at byte " << first << "\n";
  }
  return diff.str();
}

}  // namespace kiln::testing
