// Helpers for the op tests (tests/ops/<op>_test.cpp): tensor descriptions and kernel
// configurations, running a tactic's kernel on host buffers, independent index arithmetic,
// comparisons, the shape-rule checks, and the problems of the sgemm-backed ops. Random data comes
// from Rng (random_test_util.h): fresh seeds, never zeros.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "backends/cpu/kernel.h"
#include "ops/op.h"
#include "ops/op_table.h"
#include "random_test_util.h"

namespace kiln::testing {

// ---------------------------------------------------------------------------------------------
// Descriptions, configurations, tactics

inline PluginTensorDesc desc(const Dims& dims, DataType type = DataType::kFLOAT,
                             TensorFormat format = TensorFormat::kLINEAR) {
  PluginTensorDesc d;
  d.dims = dims;
  d.type = type;
  d.format = format;
  return d;
}

inline PluginTensorDesc fp32(const Dims& dims) {
  PluginTensorDesc d;
  d.dims = dims;
  return d;
}

inline int64_t count(const Dims& d) {
  int64_t c = 1;
  for (int32_t i = 0; i < d.nbDims; ++i) c *= d.d[i];
  return c;
}

inline KernelConfig config(LayerType type, LayerParams params, std::vector<PluginTensorDesc> inputs,
                           std::vector<PluginTensorDesc> outputs) {
  KernelConfig c;
  c.type = type;
  c.params = params;
  c.inputs = std::move(inputs);
  c.outputs = std::move(outputs);
  c.constantInputs.assign(c.inputs.size(), nullptr);
  return c;
}

// Output descriptions as shape inference gives them (linear); fails the test if it refuses.
template <class P, class F>
std::vector<PluginTensorDesc> inferredOutputs(F infer, const P& p,
                                              const std::vector<PluginTensorDesc>& inputs) {
  std::vector<TensorShape> in, out;
  for (const auto& d : inputs) in.push_back({d.dims, d.type});
  const Status st = infer(p, in, out);
  EXPECT_TRUE(st.isOk()) << st.toString();
  std::vector<PluginTensorDesc> r;
  for (const auto& s : out) r.push_back(desc(s.dims, s.type));
  return r;
}

inline KernelPtr create(const Tactic& t, const KernelConfig& c) {
  std::string why;
  auto k = t.create(c, &why);
  EXPECT_TRUE(k) << t.name << " declined: " << why;
  return k;
}

// The reason a tactic declines, or "" (and a test failure) when it accepts.
inline std::string declines(const Tactic& t, const KernelConfig& c) {
  std::string why;
  auto k = t.create(c, &why);
  EXPECT_FALSE(k) << t.name << " accepted a configuration it should refuse";
  EXPECT_FALSE(why.empty()) << t.name << " declined without a reason";
  return why;
}

// The tactic called `name`; a test failure (and the last tactic) when there is none.
inline const Tactic& tacticNamed(std::span<const Tactic> list, const char* name) {
  for (const auto& t : list)
    if (std::string(t.name) == name) return t;
  ADD_FAILURE() << "no tactic " << name;
  return list.back();
}

// The tactic called `name`, or null.
inline const Tactic* findTactic(std::span<const Tactic> list, std::string_view name) {
  for (const Tactic& t : list)
    if (name == t.name) return &t;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Running kernels

// Runs a kernel with a 64-byte aligned workspace of the size it asks for.
inline Status runKernel(const Kernel& k, std::vector<const void*> in, std::vector<void*> out) {
  const size_t ws = k.workspaceSize();
  std::unique_ptr<void, void (*)(void*)> buf(
      ws ? std::aligned_alloc(64, (ws + 63) / 64 * 64) : nullptr, &std::free);
  return k.run(in.data(), out.data(), buf.get(), {});
}

// 64-byte aligned scratch, pre-filled with NaN so a kernel that reads scratch or output it has
// not written shows up in the results.
class Buffer {
 public:
  explicit Buffer(size_t bytes) : raw_(bytes + 64) {
    auto v = reinterpret_cast<uintptr_t>(raw_.data());
    data_ = reinterpret_cast<float*>((v + 63) & ~static_cast<uintptr_t>(63));
    const size_t floats = bytes / sizeof(float);
    for (size_t i = 0; i < floats; ++i) data_[i] = std::numeric_limits<float>::quiet_NaN();
  }
  float* data() { return data_; }

 private:
  std::vector<unsigned char> raw_;
  float* data_ = nullptr;
};

// Runs `kernel` on fp32 inputs; returns the output (config.outputs[0]'s element count).
inline std::vector<float> runKernel(const Kernel& kernel, const KernelConfig& config,
                                    const std::vector<std::vector<float>>& inputs) {
  std::vector<const void*> in;
  for (const auto& v : inputs) in.push_back(v.data());
  const int64_t n = count(config.outputs[0].dims);
  Buffer out(static_cast<size_t>(n) * sizeof(float));
  Buffer workspace(kernel.workspaceSize());
  void* outs[] = {out.data()};
  Status s = kernel.run(in.data(), outs, workspace.data(), {});
  EXPECT_TRUE(s.isOk()) << s.message();
  return std::vector<float>(out.data(), out.data() + n);
}

// Creates the tactic's kernel (failing the test with the reason if it declines) and runs it.
inline std::vector<float> runTactic(const Tactic& tactic, const KernelConfig& config,
                                    const std::vector<std::vector<float>>& inputs) {
  std::string why;
  KernelPtr k = tactic.create(config, &why);
  if (!k) {
    ADD_FAILURE() << tactic.name << " declined: " << why;
    return {};
  }
  return runKernel(*k, config, inputs);
}

// Runs `tactics`' reference on inputs whose shapes are `dims` (types `types`, fp32 by default),
// with outputs as shape inference gives them; returns the fp32 output, empty on failure.
template <class P, class F>
std::vector<float> runReference(LayerType type, F infer, const P& p,
                                std::span<const Tactic> tactics, const std::vector<Dims>& dims,
                                const std::vector<const void*>& data,
                                std::vector<DataType> types = {}, Status* runStatus = nullptr) {
  std::vector<PluginTensorDesc> in;
  for (size_t i = 0; i < dims.size(); ++i)
    in.push_back(desc(dims[i], i < types.size() ? types[i] : DataType::kFLOAT));
  const auto out = inferredOutputs(infer, p, in);
  if (out.size() != 1) return {};
  const auto c = config(type, p, in, out);
  auto k = create(tacticNamed(tactics, "reference"), c);
  if (!k) return {};
  std::vector<float> y(static_cast<size_t>(volume(out[0].dims)), std::nanf(""));
  const Status st = runKernel(*k, data, {y.data()});
  if (runStatus) {
    *runStatus = st;
  } else {
    EXPECT_TRUE(st.isOk()) << st.toString();
  }
  return y;
}

// Runs `layer`'s reference tactic on inputs of any type; returns the output bytes (pre-filled
// with 0xCD, so that an element the kernel forgets shows) and the run's status in *st.
template <class P, class F>
std::vector<uint8_t> runReferenceBytes(LayerType layer, std::span<const Tactic> tactics, F infer,
                                       const P& p, const std::vector<PluginTensorDesc>& inputs,
                                       const std::vector<const void*>& data, Dims* outDims,
                                       Status* st) {
  auto outs = inferredOutputs(infer, p, inputs);
  if (outs.size() != 1) return {};
  *outDims = outs[0].dims;
  auto kernel = create(tacticNamed(tactics, "reference"), config(layer, p, inputs, outs));
  if (!kernel) return {};
  std::vector<uint8_t> out(
      static_cast<size_t>(volume(outs[0].dims)) * dataTypeSize(outs[0].type) + 1, 0xCD);
  *st = runKernel(*kernel, data, {out.data()});
  return out;
}

// The element type of T in the kernels' terms (uint8_t stands for bool).
template <class T>
DataType typeOf() {
  if constexpr (std::is_same_v<T, float>) return DataType::kFLOAT;
  if constexpr (std::is_same_v<T, int32_t>) return DataType::kINT32;
  if constexpr (std::is_same_v<T, int64_t>) return DataType::kINT64;
  return DataType::kBOOL;  // uint8_t
}

// Runs the reference activation on a 1-D tensor (123 where the kernel wrote nothing).
template <class T>
std::vector<T> runActivation(ActivationParams p, const std::vector<T>& x) {
  const Dims d = makeDims({static_cast<int64_t>(x.size())});
  auto cfg = config(LayerType::kACTIVATION, p, {desc(d, typeOf<T>())}, {desc(d, typeOf<T>())});
  auto k = create(tacticNamed(ops::Activation::cpuTactics(), "reference"), cfg);
  std::vector<T> y(x.size(), T{123});
  if (k) {
    EXPECT_TRUE(runKernel(*k, {x.data()}, {y.data()}).isOk());
  }
  return y;
}

// fp32 convenience that also takes a braced list.
inline std::vector<float> runActivation(ActivationParams p, const std::vector<float>& x) {
  return runActivation<float>(p, x);
}

inline ActivationParams act(ActivationType t, float alpha = 0.f, float beta = 0.f) {
  ActivationParams p;
  p.type = t;
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Shapes, types and indices, written independently of the kernels

inline const std::vector<DataType>& allTypes() {
  static const std::vector<DataType> types = {DataType::kFLOAT, DataType::kHALF,  DataType::kBF16,
                                              DataType::kINT8,  DataType::kINT32, DataType::kINT64,
                                              DataType::kBOOL};
  return types;
}

// A buffer of random non-zero bytes holding `dims` elements of `type`.
inline std::vector<uint8_t> randomTensor(Rng& rng, const Dims& dims, DataType type) {
  return rng.bytes(volume(dims) * static_cast<int64_t>(dataTypeSize(type)));
}

inline std::string dimsText(const Dims& d) { return kiln::dimsString(d); }

// Row-major strides of dims, in elements.
inline std::vector<int64_t> stridesOf(const Dims& d) {
  std::vector<int64_t> s(static_cast<size_t>(d.nbDims));
  int64_t v = 1;
  for (int32_t i = d.nbDims - 1; i >= 0; --i) {
    s[static_cast<size_t>(i)] = v;
    v *= d.d[i];
  }
  return s;
}

// Coordinates of linear index `index` in row-major dims (division, not an odometer, so that it
// does not share a bug with the kernels).
inline std::vector<int64_t> unravel(int64_t index, const Dims& d) {
  std::vector<int64_t> c(static_cast<size_t>(d.nbDims));
  for (int32_t i = d.nbDims - 1; i >= 0; --i) {
    c[static_cast<size_t>(i)] = index % d.d[i];
    index /= d.d[i];
  }
  return c;
}

// Linear index of coord in row-major dims.
inline int64_t ravel(const std::vector<int64_t>& coord, const Dims& dims) {
  int64_t index = 0;
  for (int32_t i = 0; i < dims.nbDims; ++i)
    index = index * dims.d[i] + coord[static_cast<size_t>(i)];
  return index;
}

// Index into an input of dims `in` for output element `index` under numpy broadcasting.
inline int64_t broadcastIndex(int64_t index, const Dims& out, const Dims& in) {
  const auto c = unravel(index, out);
  const auto s = stridesOf(in);
  int64_t r = 0;
  for (int32_t k = 0; k < in.nbDims; ++k)
    if (in.d[k] != 1)
      r += c[static_cast<size_t>(k + out.nbDims - in.nbDims)] * s[static_cast<size_t>(k)];
  return r;
}

// Dims that broadcast to `full`: a suffix of it with random dims replaced by 1.
inline Dims broadcastableTo(Rng& rng, const Dims& full) {
  Dims d;
  d.nbDims = static_cast<int32_t>(rng.uniformInt(0, full.nbDims));
  for (int32_t i = 0; i < d.nbDims; ++i)
    d.d[i] = rng.uniformInt(0, 2) == 0 ? 1 : full.d[i + full.nbDims - d.nbDims];
  return d;
}

// ---------------------------------------------------------------------------------------------
// Comparisons

// Float equality that treats two NaNs as equal.
inline bool sameFloat(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

inline std::vector<std::vector<float>> absolute(std::vector<std::vector<float>> v) {
  for (auto& t : v)
    for (float& x : t) x = std::fabs(x);
  return v;
}

// Each element of `got` must be within relTol * magnitude[i] (+ a tiny absolute slack) of
// `want`, where magnitude is the reference run on absolute inputs (sum of |terms|): the bound
// float accumulation can need, far below what a missing or wrong term costs.
inline void expectClose(const std::vector<float>& got, const std::vector<float>& want,
                        const std::vector<float>& magnitude, double relTol,
                        const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = relTol * magnitude[i] + 1e-6;
    if (!(std::fabs(static_cast<double>(got[i]) - want[i]) <= tol) && reported++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", reference " << want[i]
                    << " (tolerance " << tol << ")";
  }
}

// |got - want| <= tol for every element.
inline void expectNear(const std::vector<float>& got, const std::vector<float>& want,
                       double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// |got - want| <= tol * (1 + |want|) for every element; stops at the first that is not.
inline void expectNearScaled(const std::vector<float>& got, const std::vector<double>& want,
                             double tol, const std::string& trace) {
  ASSERT_EQ(got.size(), want.size()) << trace;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1.0 + std::fabs(want[i])))
        << "element " << i << ", " << trace;
}

// Checks every output element: `source(coord)` gives the input's linear element index, or -1 for
// the fill value `fill` (elemSize bytes). Stops at the first mismatch.
inline void expectMapped(const std::vector<uint8_t>& out, const Dims& outDims,
                         const std::vector<uint8_t>& in, size_t elemSize,
                         const std::function<int64_t(const std::vector<int64_t>&)>& source,
                         const void* fill, const std::string& what) {
  const int64_t n = volume(outDims);
  ASSERT_GE(out.size(), static_cast<size_t>(n) * elemSize) << what;
  for (int64_t e = 0; e < n; ++e) {
    const int64_t s = source(unravel(e, outDims));
    const uint8_t* want =
        s < 0 ? static_cast<const uint8_t*>(fill) : in.data() + static_cast<size_t>(s) * elemSize;
    ASSERT_EQ(0, std::memcmp(out.data() + static_cast<size_t>(e) * elemSize, want, elemSize))
        << what << ": output element " << e << " (source " << s << ")";
  }
  ASSERT_EQ(out.back(), 0xCD) << what << ": the kernel wrote past its output";
}

// ---------------------------------------------------------------------------------------------
// Shape rules: an op's infer (ops::<Op>::infer) or the op table's (inferLayerOutputs)

inline TensorShape shape(std::initializer_list<int64_t> d, DataType t = DataType::kFLOAT) {
  return {makeDims(d), t};
}
inline TensorShape f32(std::initializer_list<int64_t> d) { return {makeDims(d), DataType::kFLOAT}; }
inline TensorShape typed(std::initializer_list<int64_t> d, DataType t) { return {makeDims(d), t}; }

// Runs `infer`, expects success and returns the single output.
template <class P, class F>
TensorShape inferOk(F infer, const P& p, std::vector<TensorShape> in) {
  std::vector<TensorShape> out;
  const Status st = infer(p, in, out);
  EXPECT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? TensorShape{} : out[0];
}

// Runs `infer`, expects a failure whose message contains `fragment`.
template <class P, class F>
void inferFails(F infer, const P& p, std::vector<TensorShape> in, const std::string& fragment) {
  std::vector<TensorShape> out;
  const Status st = infer(p, in, out);
  ASSERT_FALSE(st.isOk()) << "expected a failure mentioning '" << fragment << "'";
  EXPECT_NE(st.message().find(fragment), std::string::npos)
      << "message '" << st.message() << "' lacks '" << fragment << "'";
}

// Runs `f`; on success with `out`, expects one output and stores it there.
template <class P, class F>
Status infer(F f, const P& p, std::vector<TensorShape> in, TensorShape* out = nullptr) {
  std::vector<TensorShape> o;
  Status st = f(p, in, o);
  if (st.isOk() && out) {
    EXPECT_EQ(o.size(), 1u);
    if (!o.empty()) *out = o[0];
  }
  return st;
}

// Expects an error whose message contains `part`.
#define EXPECT_ERROR(expr, part)                                             \
  do {                                                                       \
    const Status st_ = (expr);                                               \
    EXPECT_FALSE(st_.isOk()) << #expr;                                       \
    EXPECT_NE(st_.message().find(part), std::string::npos) << st_.message(); \
  } while (0)

// The error message must mention `needle` so a user can tell what is wrong.
inline void expectError(const Status& s, const std::string& needle) {
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find(needle), std::string::npos) << "message: " << s.message();
}

// The op table's shape rule for `type`: the message of its refusal (a failure if it accepts).
template <class P>
std::string inferLayerError(LayerType type, const P& p, const std::vector<TensorShape>& in) {
  std::vector<TensorShape> out;
  const Status st = inferLayerOutputs(type, p, in, out);
  EXPECT_FALSE(st.isOk()) << "accepted";
  return st.message();
}

// The op table's shape rule for `type`: expects success and returns the single output.
template <class P>
TensorShape inferLayerOk(LayerType type, const P& p, const std::vector<TensorShape>& in) {
  std::vector<TensorShape> out;
  const Status st = inferLayerOutputs(type, p, in, out);
  EXPECT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? TensorShape{} : out[0];
}

#define EXPECT_MENTIONS(text, what) EXPECT_NE((text).find(what), std::string::npos) << (text)

// ---------------------------------------------------------------------------------------------
// The sgemm-backed ops (matrix multiply, gemm): fp32 problems and their checks

struct MatrixProblem {
  KernelConfig config;
  std::vector<std::vector<float>> inputs;
  std::string what;
};

// A configuration with outputs as `infer` gives them, and random inputs (constant where asked).
template <typename Params, typename Infer>
MatrixProblem makeMatrixProblem(Rng& rng, LayerType type, const Params& p, Infer infer,
                                const std::vector<Dims>& dims, const std::vector<bool>& constant) {
  MatrixProblem pr;
  pr.config.type = type;
  pr.config.params = p;
  std::vector<TensorShape> in;
  for (size_t i = 0; i < dims.size(); ++i) {
    in.push_back({dims[i], DataType::kFLOAT});
    pr.config.inputs.push_back(fp32(dims[i]));
    pr.inputs.push_back(rng.values(count(dims[i])));
    pr.what += "input " + std::to_string(i) + " " + dimsText(dims[i]) +
               (constant[i] ? " (constant) " : " ");
  }
  pr.config.constantInputs.assign(dims.size(), nullptr);
  for (size_t i = 0; i < dims.size(); ++i)
    if (constant[i]) pr.config.constantInputs[i] = pr.inputs[i].data();
  std::vector<TensorShape> out;
  Status s = infer(p, in, out);
  EXPECT_TRUE(s.isOk()) << pr.what << s.message();
  if (s.isOk()) pr.config.outputs.push_back(fp32(out[0].dims));
  return pr;
}

inline void expectSgemmMatchesReference(std::span<const Tactic> list, const MatrixProblem& pr,
                                        int64_t reduction) {
  SCOPED_TRACE(pr.what);
  ASSERT_EQ(pr.config.outputs.size(), 1u);
  const Tactic& ref = *findTactic(list, "reference");
  std::string why;
  KernelPtr k = findTactic(list, "sgemm")->create(pr.config, &why);
  ASSERT_TRUE(k) << "sgemm declined: " << why;
  const std::vector<float> want = runTactic(ref, pr.config, pr.inputs);
  // The size of the terms: the reference on absolute inputs (and absolute alpha and beta).
  KernelConfig absConfig = pr.config;
  if (auto* g = std::get_if<GemmParams>(&absConfig.params)) {
    g->alpha = std::fabs(g->alpha);
    g->beta = std::fabs(g->beta);
  }
  const std::vector<float> magnitude = runTactic(ref, absConfig, absolute(pr.inputs));
  const std::vector<float> got = runKernel(*k, pr.config, pr.inputs);
  expectClose(got, want, magnitude, std::max(1e-5, 2.4e-7 * static_cast<double>(reduction)),
              "sgemm");
  const std::vector<float> again = runKernel(*k, pr.config, pr.inputs);
  EXPECT_EQ(0, std::memcmp(got.data(), again.data(), got.size() * sizeof(float)))
      << "sgemm is not deterministic from call to call";
}

// `list` is sgemm then the reference, and each declines fp16 inputs, a non-float output, inner
// dims that disagree and an output the inputs do not give, saying why.
inline void expectMatrixTacticsDeclineWithReasons(std::span<const Tactic> list,
                                                  const MatrixProblem& good) {
  ASSERT_EQ(list.size(), 2u);
  EXPECT_STREQ(list[0].name, "sgemm");
  EXPECT_STREQ(list[1].name, "reference");
  for (const Tactic& t : list) {
    SCOPED_TRACE(t.name);
    std::string why;
    KernelConfig c = good.config;
    c.inputs[1].type = DataType::kHALF;
    EXPECT_FALSE(t.create(c, &why));
    EXPECT_NE(why.find("fp16"), std::string::npos) << why;
    c = good.config;
    c.outputs[0].type = DataType::kINT32;
    why.clear();
    EXPECT_FALSE(t.create(c, &why));
    EXPECT_NE(why.find("output 0"), std::string::npos) << why;
    c = good.config;
    c.inputs[1].dims.d[0] = 4;  // inner dims now disagree
    why.clear();
    EXPECT_FALSE(t.create(c, &why));
    EXPECT_NE(why.find("inner"), std::string::npos) << why;
    c = good.config;
    c.outputs[0].dims.d[1] = 40;
    why.clear();
    EXPECT_FALSE(t.create(c, &why));
    EXPECT_FALSE(why.empty());
  }
}

}  // namespace kiln::testing
