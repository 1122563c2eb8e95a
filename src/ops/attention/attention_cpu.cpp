// Attention on the CPU. Tactics, fastest first:
//   blocked    fp32: per batch index, blocks of 64 query rows against blocks of 256 keys; the
//              scores of a block pair come from sgemm, the online softmax (attention_semantics.h)
//              updates each row's running maximum, sum and output, and a second sgemm adds the
//              block's probabilities times V. The scores of a whole row never exist: memory is
//              one block pair, and both products run at GEMM speed.
//   reference  fp32, fp16 or bf16 storage, accumulated in double, row by row: all scores, the
//              Softmax layer's one-pass softmax, then the weighted sum. It is the yardstick the
//              other tactics (and the CUDA kernels, through the op harness) are held to.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/exp_term.h"
#include "backends/cpu/float_elements.h"
#include "backends/cpu/sgemm.h"
#include "backends/cpu/tactic_checks.h"
#include "backends/cpu/thread_pool.h"
#include "ops/attention/attention_semantics.h"
#include "ops/op.h"
#include "ops/softmax/softmax_semantics.h"

namespace kiln::cpu {
namespace {

namespace at = ops::attention;
using at::Geometry;

// The configuration's geometry when it is consistent (and its inputs share one type), else
// false with *whyNot set.
bool readGeometry(const KernelConfig& c, Geometry& g, std::string* whyNot) {
  const auto* p = validate<AttentionParams>(c, "attention", -1, &ops::Attention::infer, whyNot);
  if (!p || !allLinear(c, "attention", whyNot)) return false;
  const bool hasMask = c.inputs.size() == 4;
  g = at::geometryOf(*p, c.inputs[0].dims, c.inputs[1].dims, c.inputs[2].dims,
                     hasMask ? &c.inputs[3].dims : nullptr, c.outputs[0].dims);
  return true;
}

template <DataType T>
void attendReference(const Geometry& g, const void* const* in, void* out) {
  using E = FloatElement<T>;
  using S = typename E::S;
  const auto* q = static_cast<const S*>(in[0]);
  const auto* k = static_cast<const S*>(in[1]);
  const auto* v = static_cast<const S*>(in[2]);
  const auto* mask = g.hasMask ? static_cast<const S*>(in[3]) : nullptr;
  auto* y = static_cast<S*>(out);
  std::vector<double> s(static_cast<size_t>(g.sk)), acc(static_cast<size_t>(g.dv));
  for (int64_t n = 0; n < g.count; ++n) {
    const at::Offsets o = at::offsetsOf(g, n);
    for (int64_t i = 0; i < g.sq; ++i) {
      double m = -INFINITY;
      for (int64_t j = 0; j < g.sk; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < g.d; ++e)
          dot += static_cast<double>(E::toFloat(q[o.q + i * g.qRow + e])) *
                 E::toFloat(k[o.k + at::keyIndex(g, j, e)]);
        const double add = mask ? E::toFloat(mask[o.mask + at::maskIndex(g, i, j)]) : 0.0;
        s[static_cast<size_t>(j)] = at::score(dot, g.scale, add);
        if (ops::softmax::raisesMax(m, s[static_cast<size_t>(j)])) m = s[static_cast<size_t>(j)];
      }
      double sum = 0;
      for (double& x : s) sum += (x = ops::softmax::sumTerm(x, m));
      const bool zeroed = g.zeroNanRows && at::nanRow(sum);
      if (zeroed) {
        std::fill(s.begin(), s.end(), 0.0);
        sum = 1;
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < g.sk; ++j)
        for (int64_t e = 0; e < g.dv; ++e)
          acc[static_cast<size_t>(e)] +=
              s[static_cast<size_t>(j)] * E::toFloat(v[o.v + j * g.vRow + e]);
      S* row = y + o.y + i * g.yRow;
      for (int64_t e = 0; e < g.dv; ++e)
        row[e] = E::fromFloat(static_cast<float>(acc[static_cast<size_t>(e)] / sum));
    }
  }
}

Status runReference(const Geometry& g, DataType type, const void* const* in, void* out) {
  switch (type) {
    case DataType::kFLOAT:
      attendReference<DataType::kFLOAT>(g, in, out);
      return Status::ok();
    case DataType::kHALF:
      attendReference<DataType::kHALF>(g, in, out);
      return Status::ok();
    case DataType::kBF16:
      attendReference<DataType::kBF16>(g, in, out);
      return Status::ok();
    default:  // refused when the kernel was made
      return internalError(std::string("attention: unexpected type ") + dataTypeName(type));
  }
}

class ReferenceAttention final : public Kernel {
 public:
  ReferenceAttention(const Geometry& g, DataType type) : g_(g), type_(type) {}
  Status run(const void* const* in, void* const* out, void*) const override {
    return runReference(g_, type_, in, out[0]);
  }

 private:
  Geometry g_;
  DataType type_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  Geometry g;
  if (!readGeometry(c, g, whyNot)) return nullptr;
  return std::make_unique<ReferenceAttention>(g, c.inputs[0].type);
}

// The blocked kernel's workspace: the scores of one block pair, the output rows of a query
// block, their running maxima and sums, then sgemm's scratch; each part 64-byte aligned.
struct BlockedLayout {
  static constexpr int64_t kQueryBlock = 64, kKeyBlock = 256;
  int64_t bq = 0, bk = 0;
  size_t scores = 0, output = 0, maxima = 0, sums = 0, gemm = 0, total = 0;

  explicit BlockedLayout(const Geometry& g) {
    bq = std::min<int64_t>(kQueryBlock, std::max<int64_t>(g.sq, 1));
    bk = std::min<int64_t>(kKeyBlock, g.sk);
    auto take = [this](size_t bytes) {
      const size_t at = total;
      total += (bytes + 63) / 64 * 64;
      return at;
    };
    scores = take(sizeof(float) * static_cast<size_t>(bq * bk));
    output = take(sizeof(float) * static_cast<size_t>(bq * g.dv));
    maxima = take(sizeof(float) * static_cast<size_t>(bq));
    sums = take(sizeof(float) * static_cast<size_t>(bq));
    gemm = take(std::max(sgemmWorkspaceSize(bq, bk, g.d), sgemmWorkspaceSize(bq, g.dv, bk)));
  }
};

class BlockedAttention final : public Kernel {
 public:
  // The query blocks of all heads are independent tasks, spread over the CPU backend's threads
  // when there is enough work in all (each with a workspace of its own), so heads of 197 tokens
  // whose products are too small to split still use every core. Each block is computed the same
  // way on any thread: results do not depend on the thread count.
  explicit BlockedAttention(const Geometry& g)
      : g_(g), layout_(g), queryBlocks_((g.sq + layout_.bq - 1) / layout_.bq) {
    const int64_t tasks = g_.count * queryBlocks_;
    if (tasks > 1 && sgemmThreads(tasks * layout_.bq, layout_.bk, g_.d + g_.dv) > 1)
      slots_ = static_cast<int>(std::min<int64_t>(cpuThreadCount(), tasks));
  }

  size_t workspaceSize() const override { return layout_.total * static_cast<size_t>(slots_); }

  Status run(const void* const* in, void* const* out, void* workspace) const override {
    parallelFor(g_.count * queryBlocks_, slots_, [&](int64_t task, int slot) {
      queryBlock(in, out, task / queryBlocks_, task % queryBlocks_ * layout_.bq,
                 static_cast<char*>(workspace) + static_cast<size_t>(slot) * layout_.total);
    });
    return Status::ok();
  }

 private:
  // Rows [i0, i0 + bq) of attention problem n, in one slot's workspace.
  void queryBlock(const void* const* in, void* const* out, int64_t n, int64_t i0,
                  char* base) const {
    const auto* q = static_cast<const float*>(in[0]);
    const auto* k = static_cast<const float*>(in[1]);
    const auto* v = static_cast<const float*>(in[2]);
    const auto* mask = g_.hasMask ? static_cast<const float*>(in[3]) : nullptr;
    auto* y = static_cast<float*>(out[0]);
    auto* s = reinterpret_cast<float*>(base + layout_.scores);
    auto* o = reinterpret_cast<float*>(base + layout_.output);
    auto* runMax = reinterpret_cast<float*>(base + layout_.maxima);
    auto* runSum = reinterpret_cast<float*>(base + layout_.sums);
    void* gemm = base + layout_.gemm;
    const at::Offsets off = at::offsetsOf(g_, n);
    const int64_t rows = std::min(layout_.bq, g_.sq - i0);
    std::fill(o, o + rows * g_.dv, 0.f);
    std::fill(runMax, runMax + rows, -INFINITY);
    std::fill(runSum, runSum + rows, 0.f);
    for (int64_t j0 = 0; j0 < g_.sk; j0 += layout_.bk) {
      const int64_t cols = std::min(layout_.bk, g_.sk - j0);
      // S = scale * Q[i0:, :] K[j0:, :]^T, [rows, cols] with leading dim bk.
      const MatrixRef qa{q + off.q + i0 * g_.qRow, g_.qRow, false};
      const MatrixRef kb = g_.keyTransposed ? MatrixRef{k + off.k + j0, g_.sk, false}
                                            : MatrixRef{k + off.k + j0 * g_.kRow, g_.kRow, true};
      sgemm(rows, cols, g_.d, g_.scale, {qa}, {kb}, 0.f, s, layout_.bk, gemm);
      for (int64_t r = 0; r < rows; ++r) {
        float* sr = s + r * layout_.bk;
        if (mask) {
          const float* mr = mask + off.mask + at::maskIndex(g_, i0 + r, j0);
          for (int64_t j = 0; j < cols; ++j) sr[j] += mr[j * g_.maskColStride];
        }
        // A NaN score leaves the maximum as it is, as std::fmax would, without its call per
        // element (which kept this loop scalar and was a fifth of the kernel's time).
        float blockMax = -INFINITY;
        for (int64_t j = 0; j < cols; ++j) blockMax = sr[j] > blockMax ? sr[j] : blockMax;
        const float m = std::fmax(runMax[r], blockMax);
        const float ref = at::referencePoint(m);
        const float alpha = std::exp(runMax[r] - ref);
        // The exponentials first, in a loop the compiler vectorizes (exp_term.h), then their
        // sum in order.
        for (int64_t j = 0; j < cols; ++j) sr[j] = expTerm(sr[j] - ref);
        float sum = 0.f;
        for (int64_t j = 0; j < cols; ++j) sum += sr[j];
        runSum[r] = runSum[r] * alpha + sum;
        runMax[r] = m;
        float* orow = o + r * g_.dv;
        for (int64_t e = 0; e < g_.dv; ++e) orow[e] *= alpha;
      }
      // O += P V[j0:, :]
      const MatrixRef pa{s, layout_.bk, false};
      const MatrixRef vb{v + off.v + j0 * g_.vRow, g_.vRow, false};
      sgemm(rows, g_.dv, cols, 1.f, {pa}, {vb}, 1.f, o, g_.dv, gemm);
    }
    float* yb = y + off.y + i0 * g_.yRow;
    for (int64_t r = 0; r < rows; ++r) {
      if (g_.zeroNanRows && at::nanRow(runSum[r])) {
        // The guarded row: V weighed by zeros (0 where V is finite, NaN where it is not).
        for (int64_t e = 0; e < g_.dv; ++e) {
          float zero = 0.f;
          for (int64_t j = 0; j < g_.sk; ++j) zero += 0.f * v[off.v + j * g_.vRow + e];
          yb[r * g_.yRow + e] = zero;
        }
        continue;
      }
      for (int64_t e = 0; e < g_.dv; ++e) yb[r * g_.yRow + e] = o[r * g_.dv + e] / runSum[r];
    }
  }

  Geometry g_;
  BlockedLayout layout_;
  int64_t queryBlocks_ = 1;
  int slots_ = 1;
};

KernelPtr createBlocked(const KernelConfig& c, std::string* whyNot) {
  Geometry g;
  if (!readGeometry(c, g, whyNot) || !allFp32(c, "attention blocked", whyNot)) return nullptr;
  return std::make_unique<BlockedAttention>(g);
}

constexpr Tactic kTactics[] = {{"blocked", &createBlocked}, {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Attention::cpuTactics() { return cpu::kTactics; }
