// Tests for src/core/npy: round trips per dtype, NumPy interoperability (when numpy is
// importable), and malformed or hostile files, which must give errors, never crashes.
#include "core/npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "kiln/float16.h"

namespace kiln::npy {
namespace {

namespace fs = std::filesystem;

const DataType kAllTypes[] = {DataType::kFLOAT, DataType::kHALF,  DataType::kINT8,
                              DataType::kINT32, DataType::kINT64, DataType::kBOOL};

size_t elementSize(DataType t) {
  switch (t) {
    case DataType::kFLOAT:
    case DataType::kINT32:
      return 4;
    case DataType::kHALF:
    case DataType::kBF16:
      return 2;
    case DataType::kINT64:
      return 8;
    default:
      return 1;
  }
}

const char* descrOf(DataType t) {
  switch (t) {
    case DataType::kFLOAT:
      return "<f4";
    case DataType::kHALF:
      return "<f2";
    case DataType::kINT8:
      return "|i1";
    case DataType::kINT32:
      return "<i4";
    case DataType::kINT64:
      return "<i8";
    default:
      return "|b1";
  }
}

int64_t count(const Dims& d) {
  int64_t n = 1;
  for (int32_t i = 0; i < d.nbDims; ++i) n *= d.d[i];
  return n;
}

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = std::random_device{}();
    rng_.seed(seed_);
    dir_ = fs::temp_directory_path() /
           ("kiln_npy_test_" + std::to_string(seed_) + "_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  Dims randomDims(int32_t maxRank = 4) {
    Dims d;
    d.nbDims = std::uniform_int_distribution<int32_t>(0, maxRank)(rng_);
    for (int32_t i = 0; i < d.nbDims; ++i)
      d.d[i] = std::uniform_int_distribution<int64_t>(1, 6)(rng_);
    return d;
  }

  // Random, non-zero values of `type` (bools are a random mix of 0 and 1, with at least one 1).
  NpyArray randomArray(DataType type, const Dims& dims) {
    NpyArray a;
    a.type = type;
    a.dims = dims;
    const int64_t n = count(dims);
    a.data.resize(static_cast<size_t>(n) * elementSize(type));
    std::uniform_real_distribution<float> real(0.25f, 100.0f);
    std::bernoulli_distribution sign;
    for (int64_t i = 0; i < n; ++i) {
      uint8_t* p = a.data.data() + i * elementSize(type);
      const float f = sign(rng_) ? real(rng_) : -real(rng_);
      switch (type) {
        case DataType::kFLOAT:
          std::memcpy(p, &f, 4);
          break;
        case DataType::kHALF: {
          const uint16_t h = floatToHalf(f);
          std::memcpy(p, &h, 2);
          break;
        }
        case DataType::kBF16: {
          const uint16_t b = floatToBf16(f);
          std::memcpy(p, &b, 2);
          break;
        }
        case DataType::kINT8: {
          int8_t v = static_cast<int8_t>(std::uniform_int_distribution<int>(1, 127)(rng_));
          if (sign(rng_)) v = static_cast<int8_t>(-v);
          std::memcpy(p, &v, 1);
          break;
        }
        case DataType::kINT32: {
          const int32_t v = std::uniform_int_distribution<int32_t>(INT32_MIN, INT32_MAX)(rng_) | 1;
          std::memcpy(p, &v, 4);
          break;
        }
        case DataType::kINT64: {
          const int64_t v = std::uniform_int_distribution<int64_t>(INT64_MIN, INT64_MAX)(rng_) | 1;
          std::memcpy(p, &v, 8);
          break;
        }
        default:
          *p = (i == 0) ? 1 : static_cast<uint8_t>(sign(rng_));
          break;
      }
    }
    return a;
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static void writeBytes(const std::string& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  unsigned seed_ = 0;
  std::mt19937_64 rng_;
  fs::path dir_;
};

#define SEED_TRACE() SCOPED_TRACE("seed " + std::to_string(seed_))

void expectSame(const NpyArray& want, const NpyArray& got) {
  EXPECT_EQ(want.type, got.type);
  EXPECT_EQ(want.dims, got.dims);
  EXPECT_TRUE(want.data == got.data) << "data differs";
}

// A file built by hand: version 1.0 preamble, the given header text, then the data.
std::string handMade(const std::string& dict, const std::string& data, int major = 1) {
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  const uint32_t n = static_cast<uint32_t>(dict.size());
  s += static_cast<char>(n & 0xff);
  s += static_cast<char>((n >> 8) & 0xff);
  if (major >= 2) {
    s += static_cast<char>((n >> 16) & 0xff);
    s += static_cast<char>((n >> 24) & 0xff);
  }
  return s + dict + data;
}

Status decodeString(const std::string& bytes, NpyArray& out) {
  return decodeNpy(bytes.data(), bytes.size(), out, "test bytes");
}

TEST_F(NpyTest, RoundTripsEveryDtypeThroughFiles) {
  SEED_TRACE();
  for (DataType t : kAllTypes) {
    for (int rep = 0; rep < 4; ++rep) {
      const NpyArray a = randomArray(t, randomDims());
      const std::string p = path("a.npy");
      ASSERT_TRUE(writeNpy(p, a).isOk());
      NpyArray b;
      const Status s = readNpy(p, b);
      ASSERT_TRUE(s.isOk()) << s.message();
      expectSame(a, b);
      // NumPy aligns the data to 64 bytes; so must we.
      EXPECT_EQ((fs::file_size(p) - a.data.size()) % 64, 0u) << descrOf(t);
    }
  }
}

TEST_F(NpyTest, RoundTripsInMemory) {
  SEED_TRACE();
  for (DataType t : kAllTypes) {
    const NpyArray a = randomArray(t, randomDims(Dims::kMaxDims / 2));
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(encodeNpy(a, bytes).isOk());
    const std::string head(bytes.begin(), bytes.begin() + 64);
    EXPECT_NE(head.find(std::string("'descr': '") + descrOf(t) + "'"), std::string::npos) << head;
    NpyArray b;
    const Status s = decodeNpy(bytes.data(), bytes.size(), b);
    ASSERT_TRUE(s.isOk()) << s.message();
    expectSame(a, b);
  }
}

TEST_F(NpyTest, RankZeroEmptyAndMaximumRank) {
  SEED_TRACE();
  for (const Dims& d :
       {Dims(), makeDims({0}), makeDims({3, 0, 2}), makeDims({1, 2, 1, 2, 1, 2, 1, 2})}) {
    const NpyArray a = randomArray(DataType::kFLOAT, d);
    const std::string p = path("r.npy");
    ASSERT_TRUE(writeNpy(p, a).isOk());
    NpyArray b;
    const Status s = readNpy(p, b);
    ASSERT_TRUE(s.isOk()) << s.message();
    expectSame(a, b);
  }
  // Rank 0 is written as shape (), rank 1 as (n,), as NumPy writes them.
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(encodeNpy(randomArray(DataType::kINT32, Dims()), bytes).isOk());
  EXPECT_NE(std::string(bytes.begin(), bytes.end()).find("'shape': ()"), std::string::npos);
  ASSERT_TRUE(encodeNpy(randomArray(DataType::kINT32, makeDims({5})), bytes).isOk());
  EXPECT_NE(std::string(bytes.begin(), bytes.end()).find("'shape': (5,)"), std::string::npos);
}

TEST_F(NpyTest, Bf16IsWrittenAsFloat32) {
  SEED_TRACE();
  const NpyArray a = randomArray(DataType::kBF16, makeDims({3, 7}));
  const std::string p = path("bf16.npy");
  ASSERT_TRUE(writeNpy(p, a).isOk());
  NpyArray b;
  ASSERT_TRUE(readNpy(p, b).isOk());
  EXPECT_EQ(b.type, DataType::kFLOAT);
  EXPECT_EQ(b.dims, a.dims);
  ASSERT_EQ(b.data.size(), a.data.size() * 2);
  for (size_t i = 0; i < a.data.size() / 2; ++i) {
    uint16_t h;
    float f;
    std::memcpy(&h, a.data.data() + 2 * i, 2);
    std::memcpy(&f, b.data.data() + 4 * i, 4);
    ASSERT_EQ(f, bf16ToFloat(h)) << "element " << i;
  }
}

TEST_F(NpyTest, ReadsVersionTwoAndOtherSpellings) {
  SEED_TRACE();
  const NpyArray a = randomArray(DataType::kINT32, makeDims({2, 3}));
  const std::string data(a.data.begin(), a.data.end());
  for (const std::string& dict :
       {std::string("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }"),
        std::string("{\"shape\": (2L, 3L), \"descr\": \"=i4\", \"fortran_order\": False}\n"),
        std::string("  {'fortran_order':False,'shape':(2,3),'descr':'<i4'}   \n")}) {
    for (int major : {1, 2, 3}) {
      NpyArray b;
      const Status s = decodeString(handMade(dict, data, major), b);
      ASSERT_TRUE(s.isOk()) << dict << " v" << major << ": " << s.message();
      expectSame(a, b);
    }
  }
}

TEST_F(NpyTest, RefusesMalformedHeaders) {
  const std::string okDict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string data(8, '\x01');
  struct Case {
    std::string bytes;
    std::string mustMention;
  };
  const std::vector<Case> cases = {
      {"", "not an .npy file"},
      {"\x93NUMP", "not an .npy file"},
      {"PK\x03\x04 not numpy at all", "not an .npy file"},
      {handMade(okDict, data).substr(0, 9), "truncated"},
      {handMade(okDict, data, 2).substr(0, 11), "truncated"},
      {handMade(okDict, data).substr(0, 30), "runs past the end"},
      {handMade(okDict, data).substr(0, handMade(okDict, data).size() - 1), "needs 8 data bytes"},
      {handMade(okDict, data + "xx"), "unexpected bytes"},
      {[&] {
         std::string s = handMade(okDict, data);
         s[6] = 9;
         return s;
       }(),
       "version 9.0"},
      {handMade("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", data), "Fortran"},
      {handMade("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", data), "'<f8'"},
      {handMade("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", data), "big-endian"},
      {handMade("{'descr': '<u2', 'fortran_order': False, 'shape': (4,), }", data), "'<u2'"},
      {handMade("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", data),
       "structured"},
      {handMade("{'descr': '<f4', 'shape': (2,), }", data), "must have the keys"},
      {handMade("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", data),
       "duplicate"},
      {handMade("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", data),
       "unexpected key"},
      {handMade("{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}", data), "expected ':'"},
      {handMade("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", data), "expected"},
      {handMade("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", data),
       "non-negative integer"},
      {handMade("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", data),
       "overflows"},
      {handMade("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}", data),
       "more than 8"},
      {handMade("{'descr': '<f4', 'fortran_order': Nope, 'shape': (2,)}", data), "True or False"},
      {handMade("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", data),
       "after the closing"},
      {handMade("['descr', '<f4']", data), "expected '{'"},
      {handMade("{'descr': '|b1', 'fortran_order': False, 'shape': (8,)}",
                std::string(7, '\0') + "\x02"),
       "must be 0 or 1"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    NpyArray out;
    out.type = DataType::kINT64;
    const Status s = decodeString(cases[i].bytes, out);
    EXPECT_FALSE(s.isOk()) << "case " << i;
    EXPECT_NE(s.message().find(cases[i].mustMention), std::string::npos)
        << "case " << i << ": " << s.message();
    EXPECT_NE(s.message().find("test bytes"), std::string::npos) << "case " << i;
    EXPECT_EQ(out.type, DataType::kINT64) << "a failed read must leave the output alone";
  }
}

TEST_F(NpyTest, HugeShapesFailWithoutAllocating) {
  // 2^60 floats fit int64 but not the file; the others overflow the element or byte count.
  for (const char* shape : {"(1099511627776, 1048576)", "(4611686018427387904, 8)",
                            "(9223372036854775807,)", "(3037000500, 3037000500, 3)"}) {
    const std::string bytes = handMade(
        "{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(shape) + "}", "abcd");
    NpyArray out;
    const Status s = decodeString(bytes, out);
    EXPECT_FALSE(s.isOk()) << shape;
    EXPECT_EQ(s.code(), StatusCode::kCorruptData) << s.message();
    const std::string p = path("huge.npy");
    writeBytes(p, bytes);
    EXPECT_FALSE(readNpy(p, out).isOk()) << shape;
  }
  // A header length beyond the limit is refused before it is read.
  std::string big = "\x93NUMPY\x02";
  big += '\0';
  big += std::string("\x00\x00\x00\x7f", 4);
  NpyArray out;
  EXPECT_FALSE(decodeString(big, out).isOk());
}

TEST_F(NpyTest, FileErrorsNameThePath) {
  SEED_TRACE();
  NpyArray out;
  Status s = readNpy(path("missing.npy"), out);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("missing.npy"), std::string::npos) << s.message();

  s = readNpy(dir_.string(), out);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("not a regular file"), std::string::npos) << s.message();

  // A valid file cut short anywhere fails cleanly.
  const NpyArray a = randomArray(DataType::kINT64, makeDims({4, 5}));
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(encodeNpy(a, bytes).isOk());
  for (size_t cut : {size_t{0}, size_t{5}, size_t{10}, size_t{40}, size_t{64}, bytes.size() - 1}) {
    writeBytes(path("cut.npy"), std::string(bytes.begin(), bytes.begin() + cut));
    s = readNpy(path("cut.npy"), out);
    EXPECT_FALSE(s.isOk()) << "cut at " << cut;
    EXPECT_NE(s.message().find("cut.npy"), std::string::npos) << s.message();
  }

  s = writeNpy((dir_ / "no" / "such" / "dir.npy").string(), a);
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("dir.npy"), std::string::npos) << s.message();
}

TEST_F(NpyTest, RefusesToWriteInconsistentArrays) {
  SEED_TRACE();
  NpyArray a = randomArray(DataType::kFLOAT, makeDims({2, 3}));
  a.data.pop_back();
  std::vector<uint8_t> bytes;
  EXPECT_EQ(encodeNpy(a, bytes).code(), StatusCode::kInvalidArgument);
  a = randomArray(DataType::kFLOAT, makeDims({2, 3}));
  a.dims.d[1] = -3;
  EXPECT_EQ(encodeNpy(a, bytes).code(), StatusCode::kInvalidArgument);
  a.dims.nbDims = 9;
  EXPECT_EQ(encodeNpy(a, bytes).code(), StatusCode::kInvalidArgument);
  a = randomArray(DataType::kBOOL, makeDims({4}));
  a.data[2] = 7;
  EXPECT_FALSE(encodeNpy(a, bytes).isOk());
  a.type = static_cast<DataType>(99);
  EXPECT_EQ(encodeNpy(a, bytes).code(), StatusCode::kUnsupported);
}

// Random corruption of valid files: every outcome is allowed except a crash (the sanitizers
// watch), and whatever decodes must be self-consistent.
TEST_F(NpyTest, SurvivesRandomCorruption) {
  SEED_TRACE();
  std::uniform_int_distribution<int> byte(0, 255);
  for (int rep = 0; rep < 3000; ++rep) {
    const NpyArray a = randomArray(kAllTypes[rep % 6], randomDims(3));
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(encodeNpy(a, bytes).isOk());
    const int edits = std::uniform_int_distribution<int>(1, 4)(rng_);
    for (int e = 0; e < edits; ++e) {
      const size_t at =
          std::uniform_int_distribution<size_t>(0, std::min<size_t>(bytes.size(), 80) - 1)(rng_);
      bytes[at] = static_cast<uint8_t>(byte(rng_));
    }
    if (rep % 5 == 0) bytes.resize(std::uniform_int_distribution<size_t>(0, bytes.size())(rng_));
    NpyArray out;
    if (decodeNpy(bytes.data(), bytes.size(), out).isOk()) {
      int64_t n = 1;
      for (int32_t i = 0; i < out.dims.nbDims; ++i) n *= out.dims.d[i];
      ASSERT_EQ(out.data.size(), static_cast<size_t>(n) * elementSize(out.type));
    }
  }
}

// ---- NumPy interoperability ---------------------------------------------------------------------

// The interpreter to try: $KILN_PYTHON, else python3.
std::string python() {
  const char* p = std::getenv("KILN_PYTHON");
  return p && *p ? p : "python3";
}

bool numpyAvailable() {
  const std::string cmd = python() + " -c \"import numpy\" > /dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// Loads each file named on the command line with numpy, checks dtype and shape, writes back a
// version 2.0 copy and the float64 sum of the values (so a misread dtype shows), and writes
// files only numpy makes: Fortran order, and a float64 array.
constexpr const char* kScript = R"PY(
import sys
import numpy as np
out_dir = sys.argv[1]
with open(out_dir + "/sums.txt", "w") as sums:
    for spec in sys.argv[2:]:
        path, descr, shape = spec.split(";")
        a = np.load(path)
        want_shape = tuple(int(x) for x in shape.split(",") if x)
        assert a.dtype.str == descr, (path, a.dtype.str, descr)
        assert a.shape == want_shape, (path, a.shape, want_shape)
        with open(path[:-4] + ".v2.npy", "wb") as f:
            np.lib.format.write_array(f, a, version=(2, 0))
        sums.write(repr(float(a.astype(np.float64).sum())) + "\n")
np.save(out_dir + "/fortran.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
np.save(out_dir + "/f8.npy", np.arange(3, dtype=np.float64))
np.save(out_dir + "/native.npy", np.array([[7, -9], [11, 13]], dtype=np.int64))
)PY";

double sumOf(const NpyArray& a) {
  double s = 0;
  const size_t n = a.data.size() / elementSize(a.type);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = a.data.data() + i * elementSize(a.type);
    switch (a.type) {
      case DataType::kFLOAT: {
        float f;
        std::memcpy(&f, p, 4);
        s += f;
        break;
      }
      case DataType::kHALF: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        s += halfToFloat(h);
        break;
      }
      case DataType::kINT8:
        s += static_cast<int8_t>(*p);
        break;
      case DataType::kINT32: {
        int32_t v;
        std::memcpy(&v, p, 4);
        s += v;
        break;
      }
      case DataType::kINT64: {
        int64_t v;
        std::memcpy(&v, p, 8);
        s += static_cast<double>(v);
        break;
      }
      default:
        s += *p;
        break;
    }
  }
  return s;
}

TEST_F(NpyTest, InteroperatesWithNumpy) {
  if (!numpyAvailable())
    GTEST_SKIP() << "numpy is not importable by '" << python() << "' (set KILN_PYTHON to choose)";
  SEED_TRACE();
  std::vector<NpyArray> arrays;
  std::string args;
  for (DataType t : kAllTypes) {
    NpyArray a = randomArray(t, randomDims());
    // int64 sums in float64 lose bits; small values keep the comparison exact.
    if (t == DataType::kINT64) {
      for (size_t i = 0; i < a.data.size(); i += 8) {
        int64_t v;
        std::memcpy(&v, a.data.data() + i, 8);
        v = (v >> 24) | 1;
        std::memcpy(a.data.data() + i, &v, 8);
      }
    }
    const std::string p = path(std::string("t") + std::to_string(arrays.size()) + ".npy");
    ASSERT_TRUE(writeNpy(p, a).isOk());
    std::string shape;
    for (int32_t i = 0; i < a.dims.nbDims; ++i) shape += std::to_string(a.dims.d[i]) + ",";
    args += " '" + p + ";" + descrOf(t) + ";" + shape + "'";
    arrays.push_back(std::move(a));
  }
  const std::string script = path("interop.py");
  writeBytes(script, kScript);
  const std::string cmd = python() + " '" + script + "' '" + dir_.string() + "'" + args;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  std::ifstream sums(path("sums.txt"));
  for (size_t i = 0; i < arrays.size(); ++i) {
    double numpySum = 0;
    ASSERT_TRUE(sums >> numpySum) << "no sum for array " << i;
    const double ours = sumOf(arrays[i]);
    EXPECT_NEAR(numpySum, ours, 1e-9 * (1 + std::fabs(ours))) << descrOf(arrays[i].type);
    NpyArray back;
    const Status s = readNpy(path("t" + std::to_string(i) + ".v2.npy"), back);
    ASSERT_TRUE(s.isOk()) << s.message();
    expectSame(arrays[i], back);
  }

  NpyArray out;
  Status s = readNpy(path("fortran.npy"), out);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("Fortran"), std::string::npos) << s.message();
  s = readNpy(path("f8.npy"), out);
  EXPECT_NE(s.message().find("'<f8'"), std::string::npos) << s.message();
  s = readNpy(path("native.npy"), out);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(out.dims, makeDims({2, 2}));
  int64_t v[4];
  std::memcpy(v, out.data.data(), sizeof v);
  EXPECT_EQ(v[0], 7);
  EXPECT_EQ(v[1], -9);
  EXPECT_EQ(v[3], 13);
}

}  // namespace
}  // namespace kiln::npy
