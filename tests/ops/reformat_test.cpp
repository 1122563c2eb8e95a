// Reformat: its shape rule (every type pair, formats) and its CPU tactic: every supported type
// pair with every format pair on random shapes, against a per-coordinate conversion written out
// here; hand-computed cases; refusals.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "kiln/float16.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(InferReformat, TypesAndFormats) {
  ReformatParams p;
  p.outputType = DataType::kHALF;
  p.outputFormat = TensorFormat::kCHANNELS_LAST;
  const TensorShape s = inferOk(ops::Reformat::infer, p, {shape({1, 2, 3, 4})});
  EXPECT_EQ(s.dims, makeDims({1, 2, 3, 4}));
  EXPECT_EQ(s.type, DataType::kHALF);
  inferFails(ops::Reformat::infer, p, {shape({2, 3, 4})}, "channels_last needs a rank-4");

  p.outputFormat = TensorFormat::kLINEAR;
  const DataType all[] = {DataType::kFLOAT, DataType::kHALF,  DataType::kBF16, DataType::kINT8,
                          DataType::kINT32, DataType::kINT64, DataType::kBOOL};
  auto allowed = [](DataType a, DataType b) {
    auto isF = [](DataType t) {
      return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16;
    };
    if (a == b || (isF(a) && isF(b)) || (!isF(a) && !isF(b))) return true;
    const DataType other = a == DataType::kFLOAT ? b : a;
    return (a == DataType::kFLOAT || b == DataType::kFLOAT) && other != DataType::kINT8 &&
           !isF(other);
  };
  for (DataType from : all)
    for (DataType to : all) {
      p.outputType = to;
      std::vector<TensorShape> out;
      const Status st = ops::Reformat::infer(p, {shape({3}, from)}, out);
      EXPECT_EQ(st.isOk(), allowed(from, to))
          << dataTypeName(from) << " -> " << dataTypeName(to) << ": " << st.toString();
      if (!st.isOk()) {
        EXPECT_EQ(st.code(), StatusCode::kUnsupported);
        EXPECT_NE(st.message().find(dataTypeName(from)), std::string::npos) << st.message();
      }
    }
  p.outputType = DataType::kFLOAT;
  inferFails(ops::Reformat::infer, p, {shape({3}, DataType::kINT8)}, "quantization");
  p.outputType = static_cast<DataType>(9);
  inferFails(ops::Reformat::infer, p, {shape({3})}, "invalid output type");
  p.outputType = DataType::kFLOAT;
  p.outputFormat = static_cast<TensorFormat>(5);
  inferFails(ops::Reformat::infer, p, {shape({1, 2, 3, 4})}, "invalid output format");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

const DataType kAllTypes[] = {DataType::kFLOAT, DataType::kHALF,  DataType::kBF16, DataType::kINT8,
                              DataType::kINT32, DataType::kINT64, DataType::kBOOL};

bool isFloat(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16;
}

// The value of element i of a buffer, as double (exact for every value the tests use).
double decode(DataType t, const uint8_t* p) {
  switch (t) {
    case DataType::kFLOAT: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DataType::kHALF: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return halfToFloat(h);
    }
    case DataType::kBF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return bf16ToFloat(h);
    }
    case DataType::kINT8:
      return static_cast<int8_t>(*p);
    case DataType::kINT32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DataType::kINT64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case DataType::kBOOL:
      return *p != 0 ? 1.0 : 0.0;
  }
  return 0;
}

template <class I>
I saturate(double v) {
  if (std::isnan(v)) return 0;
  v = std::trunc(v);
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  return static_cast<I>(v);
}

// The documented cast rules, from a decoded value.
void encode(DataType t, double v, uint8_t* p) {
  switch (t) {
    case DataType::kFLOAT: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case DataType::kHALF: {
      const uint16_t h = floatToHalf(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case DataType::kBF16: {
      const uint16_t h = floatToBf16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case DataType::kINT8:
      *p = static_cast<uint8_t>(saturate<int8_t>(v));
      break;
    case DataType::kINT32: {
      const int32_t x = saturate<int32_t>(v);
      std::memcpy(p, &x, 4);
      break;
    }
    case DataType::kINT64: {
      const int64_t x = saturate<int64_t>(v);
      std::memcpy(p, &x, 8);
      break;
    }
    case DataType::kBOOL:
      *p = v != 0 ? 1 : 0;
      break;  // NaN != 0
  }
}

std::vector<uint8_t> randomData(Rng& rng, DataType t, int64_t n) {
  std::vector<uint8_t> out(static_cast<size_t>(n) * dataTypeSize(t));
  for (int64_t i = 0; i < n; ++i) {
    uint8_t* p = out.data() + i * static_cast<int64_t>(dataTypeSize(t));
    double v = 0;
    if (isFloat(t)) {
      v = rng.nonZeroFloat(-300.f, 300.f);
      // Now and then a value that saturates or is NaN.
      const int64_t pick = rng.uniformInt(0, 40);
      if (pick == 0) v = std::numeric_limits<double>::quiet_NaN();
      if (pick == 1) v = 1e30;
      if (pick == 2) v = -1e30;
      // Just past the int32 and int64 ranges (below twice their bound).
      if (pick == 3) v = rng.uniformInt(0, 1) ? 3e9 : -3e9;
      if (pick == 4) v = rng.uniformInt(0, 1) ? 1.5e19 : -1.5e19;
    } else if (t == DataType::kBOOL) {
      v = static_cast<double>(rng.uniformInt(0, 1));
    } else {
      v = static_cast<double>(rng.nonZeroInt(-1000, 1000));
      if (t == DataType::kINT64 && rng.uniformInt(0, 20) == 0) v = 1e15;
    }
    encode(t, v, p);
  }
  return out;
}

int64_t offsetOf(const std::vector<int64_t>& c, const Dims& d, TensorFormat f) {
  if (f == TensorFormat::kLINEAR) {
    const auto s = stridesOf(d);
    int64_t o = 0;
    for (size_t i = 0; i < c.size(); ++i) o += c[i] * s[i];
    return o;
  }
  return ((c[0] * d.d[2] + c[2]) * d.d[3] + c[3]) * d.d[1] + c[1];  // NHWC
}

TEST(Reformat, EverySupportedPairEveryFormat) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const auto& ref = tacticNamed(ops::Reformat::cpuTactics(), "reference");
  const TensorFormat formats[] = {TensorFormat::kLINEAR, TensorFormat::kCHANNELS_LAST};
  int tried = 0;
  for (DataType from : kAllTypes)
    for (DataType to : kAllTypes)
      for (TensorFormat fi : formats)
        for (TensorFormat fo : formats) {
          ReformatParams p;
          p.outputType = to;
          p.outputFormat = fo;
          const bool rank4 =
              fi != TensorFormat::kLINEAR || fo != TensorFormat::kLINEAR || rng.uniformInt(0, 1);
          const Dims d =
              rank4 ? rng.dims(4, 5) : rng.dims(static_cast<int32_t>(rng.uniformInt(0, 3)), 6);
          std::vector<TensorShape> shapes;
          if (!ops::Reformat::infer(p, {{d, from}}, shapes).isOk()) continue;
          ++tried;
          SCOPED_TRACE(std::string(dataTypeName(from)) + " " + formatName(fi) + " -> " +
                       dataTypeName(to) + " " + formatName(fo));
          auto cfg = config(LayerType::kREFORMAT, p, {desc(d, from, fi)}, {desc(d, to, fo)});
          auto k = create(ref, cfg);
          ASSERT_TRUE(k);
          const auto src = randomData(rng, from, volume(d));
          std::vector<uint8_t> out(static_cast<size_t>(volume(d)) * dataTypeSize(to), 0xAB);
          ASSERT_TRUE(runKernel(*k, {src.data()}, {out.data()}).isOk());
          const int64_t ie = static_cast<int64_t>(dataTypeSize(from));
          const int64_t oe = static_cast<int64_t>(dataTypeSize(to));
          for (int64_t i = 0; i < volume(d); ++i) {
            const auto c = unravel(i, d);
            uint8_t want[8];
            const double v = decode(from, src.data() + offsetOf(c, d, fi) * ie);
            encode(to, v, want);
            const uint8_t* got = out.data() + offsetOf(c, d, fo) * oe;
            ASSERT_EQ(0, std::memcmp(got, want, static_cast<size_t>(oe)))
                << "element " << i << " value " << v << " dims " << d.nbDims;
          }
        }
  EXPECT_EQ(tried, 4 * 31);  // 31 supported type pairs, each in the 4 format pairs
}

TEST(Reformat, HandComputedCasts) {
  auto convert = [](DataType from, DataType to, const void* src, void* dst, int64_t n) {
    ReformatParams p;
    p.outputType = to;
    const Dims d = makeDims({n});
    auto cfg = config(LayerType::kREFORMAT, p, {desc(d, from)}, {desc(d, to)});
    auto k = create(tacticNamed(ops::Reformat::cpuTactics(), "reference"), cfg);
    if (k) {
      EXPECT_TRUE(runKernel(*k, {src}, {dst}).isOk());
    }
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float f[] = {3e9f, -3.7f, nan, -3e9f, 2.5f, -0.f};
  int32_t i32[6];
  convert(DataType::kFLOAT, DataType::kINT32, f, i32, 6);
  EXPECT_EQ(std::vector<int32_t>(i32, i32 + 6),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::max(), -3, 0,
                                  std::numeric_limits<int32_t>::min(), 2, 0}));
  uint8_t b[6];
  convert(DataType::kFLOAT, DataType::kBOOL, f, b, 6);
  EXPECT_EQ(std::vector<uint8_t>(b, b + 6), (std::vector<uint8_t>{1, 1, 1, 1, 1, 0}));
  const uint8_t bools[] = {0, 2, 1};
  float fb[3];
  convert(DataType::kBOOL, DataType::kFLOAT, bools, fb, 3);
  EXPECT_EQ(std::vector<float>(fb, fb + 3), (std::vector<float>{0.f, 1.f, 1.f}));
  const int64_t big[] = {int64_t{1} << 62, -(int64_t{1} << 40), 100};
  int8_t i8[3];
  convert(DataType::kINT64, DataType::kINT8, big, i8, 3);
  EXPECT_EQ(std::vector<int8_t>(i8, i8 + 3), (std::vector<int8_t>{127, -128, 100}));
  const float h[] = {65520.f, 1.f / 3.f};
  uint16_t hb[2];
  convert(DataType::kFLOAT, DataType::kHALF, h, hb, 2);
  EXPECT_EQ(hb[0], 0x7c00);  // rounds to infinity
  EXPECT_EQ(hb[1], 0x3555);
  float i64f[1];
  const int64_t odd[] = {(int64_t{1} << 40) + 1};
  convert(DataType::kINT64, DataType::kFLOAT, odd, i64f, 1);
  EXPECT_EQ(i64f[0], static_cast<float>(int64_t{1} << 40));
}

TEST(Reformat, HandComputedLayouts) {
  const Dims d = makeDims({1, 2, 2, 2});
  ReformatParams p;
  p.outputFormat = TensorFormat::kCHANNELS_LAST;
  auto cfg = config(LayerType::kREFORMAT, p, {desc(d)},
                    {desc(d, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)});
  auto k = create(tacticNamed(ops::Reformat::cpuTactics(), "reference"), cfg);
  ASSERT_TRUE(k);
  const std::vector<float> nchw = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> nhwc(8);
  ASSERT_TRUE(runKernel(*k, {nchw.data()}, {nhwc.data()}).isOk());
  EXPECT_EQ(nhwc, (std::vector<float>{1, 5, 2, 6, 3, 7, 4, 8}));
}

TEST(Reformat, Refusals) {
  const auto& ref = tacticNamed(ops::Reformat::cpuTactics(), "reference");
  const Dims d3 = makeDims({2, 3, 4}), d4 = makeDims({1, 2, 3, 4});
  ReformatParams p;
  p.outputFormat = TensorFormat::kCHANNELS_LAST;
  EXPECT_NE(declines(ref, config(LayerType::kREFORMAT, p, {desc(d3)},
                                 {desc(d3, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)}))
                .find("rank 4"),
            std::string::npos);
  // The output tensor's format must be the one the params promise.
  EXPECT_NE(
      declines(ref, config(LayerType::kREFORMAT, p, {desc(d4)}, {desc(d4)})).find("channels_last"),
      std::string::npos);
  p.outputFormat = TensorFormat::kLINEAR;
  p.outputType = DataType::kFLOAT;
  EXPECT_NE(declines(ref, config(LayerType::kREFORMAT, p, {desc(d3, DataType::kINT8)}, {desc(d3)}))
                .find("quantization"),
            std::string::npos);
  p.outputType = DataType::kINT32;
  declines(ref, config(LayerType::kREFORMAT, p, {desc(d3, DataType::kHALF)},
                       {desc(d3, DataType::kINT32)}));
  // Output type disagreeing with the params.
  declines(ref, config(LayerType::kREFORMAT, p, {desc(d3)}, {desc(d3)}));
}

}  // namespace
}  // namespace kiln::testing
