// CPU tactics against their references, measured in the same run: the figure the builder's
// timing sees, for people choosing what to optimise next. Prints kiln's fast tactic, the plain
// reference (the peer here) and the ratio. CPU timings vary with the machine; compare ratios.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/sgemm.h"
#include "backends/cpu/thread_pool.h"
#include "core/aligned_buffer.h"
#include "ops/op_table.h"

namespace kiln {
namespace {

struct Problem {
  std::string name;
  KernelConfig config;
};

double medianMs(const Kernel& kernel, const std::vector<const void*>& in,
                const std::vector<void*>& out, void* workspace, int runs) {
  std::vector<double> t;
  for (int r = 0; r < runs + 1; ++r) {
    const auto a = std::chrono::steady_clock::now();
    (void)kernel.run(in.data(), out.data(), workspace, RunContext{});
    const auto b = std::chrono::steady_clock::now();
    if (r) t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

void run(const Problem& p, const char* fast) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<std::vector<float>> ins;
  std::vector<const void*> inPtrs;
  for (const PluginTensorDesc& t : p.config.inputs) {
    ins.emplace_back(static_cast<size_t>(volume(t.dims)));
    for (float& v : ins.back()) v = d(rng);
    inPtrs.push_back(ins.back().data());
  }
  KernelConfig config = p.config;
  config.constantInputs.assign(ins.size(), nullptr);
  for (size_t i = 1; i < ins.size(); ++i) config.constantInputs[i] = ins[i].data();  // weights
  std::vector<float> out(static_cast<size_t>(volume(config.outputs[0].dims)));
  std::vector<void*> outPtrs{out.data()};
  std::string why;
  auto fastKernel = ops::findTactic(ops::cpuTactics(config.type), fast)->create(config, &why);
  auto refKernel = ops::findTactic(ops::cpuTactics(config.type), "reference")->create(config, &why);
  if (!fastKernel || !refKernel) {
    std::printf("%-40s skipped: %s\n", p.name.c_str(), why.c_str());
    return;
  }
  AlignedBuffer ws(std::max(fastKernel->workspaceSize(), refKernel->workspaceSize()));
  const double f = medianMs(*fastKernel, inPtrs, outPtrs, ws.data(), 9);
  const double r = medianMs(*refKernel, inPtrs, outPtrs, ws.data(), 3);
  std::printf("%-40s %-14s %9.3f ms   reference %9.3f ms   speed-up %6.1fx\n", p.name.c_str(), fast,
              f, r, r / f);
}

// sgemm alone on 1 thread and on the whole pool (KILN_CPU_THREADS), B packed ahead as a weight
// is: the GEMMs of a ViT-B/16 encoder block at batch 1 (197 tokens) and square ones. Back to
// back, as a model's GEMMs run, so the pool's workers are awake.
void sgemmScaling() {
  struct Shape {
    const char* name;
    int64_t m, n, k;
  };
  const Shape shapes[] = {{"vit qkv     [197,768]x[768,2304]", 197, 2304, 768},
                          {"vit proj    [197,768]x[768,768]", 197, 768, 768},
                          {"vit mlp up  [197,768]x[768,3072]", 197, 3072, 768},
                          {"vit mlp dn  [197,3072]x[3072,768]", 197, 768, 3072},
                          {"vit scores  [197,64]x[64,197]", 197, 197, 64},
                          {"square      [1024,1024]x[1024,1024]", 1024, 1024, 1024},
                          // Around where splitting starts to pay (sgemm.cpp's kMacsPerThread).
                          {"square      [128,128]x[128,128]", 128, 128, 128},
                          {"square      [160,160]x[160,160]", 160, 160, 160},
                          {"square      [256,256]x[256,256]", 256, 256, 256}};
  const int all = cpu::cpuThreadCount();
  std::printf("\nsgemm (%s), 1 thread vs %d (KILN_CPU_THREADS), median of 9\n",
              cpu::sgemmVariantName(), all);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1, 1);
  for (const Shape& s : shapes) {
    std::vector<float> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.k * s.n)),
        c(static_cast<size_t>(s.m * s.n));
    for (float& v : a) v = d(rng);
    for (float& v : b) v = d(rng);
    const cpu::PackedMatrix pb = cpu::PackedMatrix::packB(s.k, s.n, {b.data(), s.n, false});
    cpu::GemmOperand ga, gb;
    ga.raw = {a.data(), s.k, false};
    gb.packed = &pb;
    AlignedBuffer ws(cpu::sgemmWorkspaceSize(s.m, s.n, s.k));
    auto time = [&](int threads) {
      cpu::ScopedThreadLimit limit(threads);
      std::vector<double> t;
      for (int r = 0; r < 10; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        cpu::sgemm(s.m, s.n, s.k, 1.f, ga, gb, 0.f, c.data(), s.n, ws.data());
        const auto t1 = std::chrono::steady_clock::now();
        if (r) t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
      return t[t.size() / 2];
    };
    const double one = time(1), many = time(all);
    const double gflop = 2e-6 * static_cast<double>(s.m * s.n * s.k);  // per ms -> GFLOP/s
    std::printf(
        "%-38s 1 thread %8.3f ms %6.1f GFLOP/s   %d threads (%d used) %8.3f ms %6.1f "
        "GFLOP/s   speed-up %4.2fx\n",
        s.name, one, gflop / one, all, cpu::sgemmThreads(s.m, s.n, s.k), many, gflop / many,
        one / many);
  }
}

PluginTensorDesc fp32(std::initializer_list<int64_t> d) {
  return {makeDims(d), DataType::kFLOAT, TensorFormat::kLINEAR, DeviceKind::kCPU};
}

}  // namespace
}  // namespace kiln

int main() {
  using namespace kiln;
  std::printf(
      "kiln CPU tactics on %d threads vs the single-threaded reference (same run, median)\n",
      cpu::cpuThreadCount());
  ConvolutionParams c;
  c.outChannels = 64;
  c.kernelH = c.kernelW = 3;
  c.padTop = c.padLeft = c.padBottom = c.padRight = 1;
  KernelConfig conv{LayerType::kCONVOLUTION,
                    c,
                    {fp32({1, 64, 56, 56}), fp32({64, 64, 3, 3}), fp32({64})},
                    {fp32({1, 64, 56, 56})},
                    {}};
  run({"conv 3x3 [1,64,56,56] -> 64", conv}, "im2col_sgemm");
  ConvolutionParams c1;
  c1.outChannels = 256;
  KernelConfig pw{LayerType::kCONVOLUTION,
                  c1,
                  {fp32({1, 64, 28, 28}), fp32({256, 64, 1, 1}), fp32({256})},
                  {fp32({1, 256, 28, 28})},
                  {}};
  run({"conv 1x1 [1,64,28,28] -> 256", pw}, "direct_1x1");
  KernelConfig mm{LayerType::kMATRIX_MULTIPLY,
                  MatrixMultiplyParams{},
                  {fp32({256, 512}), fp32({512, 256})},
                  {fp32({256, 256})},
                  {}};
  run({"matmul [256,512] x [512,256]", mm}, "sgemm");
  GemmParams g;
  g.transposeB = true;
  KernelConfig fc{LayerType::kGEMM,
                  g,
                  {fp32({64, 1024}), fp32({1000, 1024}), fp32({1000})},
                  {fp32({64, 1000})},
                  {}};
  run({"fully connected [64,1024] -> 1000", fc}, "sgemm");
  sgemmScaling();
  return 0;
}
