// The dense family of the CUDA backend (convolution, deconvolution, pooling, matrix multiply,
// gemm): the validated geometry every tactic works from, and the entry points of its files.
//
//   dense_tactics.cpp      validation (configuration == shape inference, or decline) and the
//                          per-layer tactic lists, fastest first, kiln's reference last
//   dense_reference.cu     kiln's own per-element kernels (every type, both formats) and the
//                          small helper kernels the library tactics use (bias, C, filter packing)
//   dense_conv_cudnn.cpp   cuDNN convolution (forward) and deconvolution (backward data)
//   dense_blas.cpp         cuBLAS matrix multiply (strided batched) and gemm
//
// Plain C++ (no CUDA header): the geometry structs are trivially copyable, so the element
// functors carry them to the device by value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backends/cuda/kernel.h"

namespace kiln::cuda::dense {

// Convolution and deconvolution. Input x [n, c, h, w], output y [n, k, oh, ow], both in the same
// format; weights always linear: conv [k, cg, kh, kw], deconv [c, kg, kh, kw].
struct ConvGeometry {
  DataType type = DataType::kFLOAT;
  bool channelsLast = false;
  bool hasBias = false;
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t k = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int64_t groups = 1, cg = 0, kg = 0;  // channels per group: input, output
  int64_t outPadH = 0, outPadW = 0;    // deconvolution only
};

// Pooling; global pooling is described as a window over the whole image (stride 1, no pads).
struct PoolGeometry {
  DataType type = DataType::kFLOAT;
  bool channelsLast = false;
  bool isMax = true;
  bool countIncludePad = false;
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
};

// Matrix multiply, numpy rules: y [batch..., m, n] = op(A) op(B); per output batch axis the
// element strides of A and B (0 where that operand broadcasts along it).
struct MatmulGeometry {
  DataType type = DataType::kFLOAT;
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0;  // last dim of A and of B as stored
  int32_t batchRank = 0;
  int64_t batch[Dims::kMaxDims] = {};
  int64_t aStride[Dims::kMaxDims] = {};
  int64_t bStride[Dims::kMaxDims] = {};
  int64_t batchCount = 1;
};

// Gemm: y [m, n] = alpha op(A) op(B) + beta C, C [cRows, cCols] aligned right to [m, n].
struct GemmGeometry {
  DataType type = DataType::kFLOAT;
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0;
  float alpha = 1.f, beta = 1.f;
  bool hasC = false;
  int64_t cRows = 1, cCols = 1;
};

// Validation (dense_tactics.cpp): true with *g filled when the configuration is one this family
// can run (CUDA tensors of one float type; linear, or channels-last for the spatial layers; the
// output exactly what shape inference gives), else false with *whyNot prefixed by `tactic`.
bool readConvolution(const KernelConfig& c, const char* tactic, ConvGeometry* g,
                     std::string* whyNot);
bool readDeconvolution(const KernelConfig& c, const char* tactic, ConvGeometry* g,
                       std::string* whyNot);
bool readPooling(const KernelConfig& c, const char* tactic, PoolGeometry* g, std::string* whyNot);
bool readMatmul(const KernelConfig& c, const char* tactic, MatmulGeometry* g, std::string* whyNot);
bool readGemm(const KernelConfig& c, const char* tactic, GemmGeometry* g, std::string* whyNot);

// kiln's own reference kernels (dense_reference.cu).
std::unique_ptr<Kernel> createConvReference(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createDeconvReference(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createPoolReference(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createMatmulReference(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createGemmReference(const KernelConfig& c, std::string* whyNot);

// Helper kernels for the library tactics (dense_reference.cu), enqueued on ctx.stream.
// y [n, channels, plane] (or channels-last) += bias[channel], in float, rounded once.
Status addChannelBias(void* y, const void* bias, DataType type, int64_t n, int64_t channels,
                      int64_t plane, bool channelsLast, const RunContext& ctx);
// y [m, n] = beta * C broadcast (the gemm then accumulates alpha op(A) op(B) with beta 1).
Status fillScaledC(void* y, const void* cData, const GemmGeometry& g, const RunContext& ctx);
// Filter [outer, inner, kh, kw] (linear) -> [outer, kh, kw, inner] (cuDNN's NHWC filter).
Status packFilterNhwc(void* dst, const void* src, DataType type, int64_t outer, int64_t inner,
                      int64_t kh, int64_t kw, const RunContext& ctx);

// Library tactics (dense_conv_cudnn.cpp, dense_blas.cpp).
std::unique_ptr<Kernel> createConvCudnn(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createDeconvCudnn(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createMatmulCublas(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createGemmCublas(const KernelConfig& c, std::string* whyNot);

}  // namespace kiln::cuda::dense
