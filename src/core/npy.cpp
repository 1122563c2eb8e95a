// The .npy format (NumPy's NEP 1): a 6-byte magic "\x93NUMPY", a major and minor version byte,
// the header length (uint16 in version 1, uint32 in versions 2 and 3, little-endian), then the
// header: a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded
// with spaces and a newline so that the data starts on a 64-byte boundary, then the raw data.
#include "core/npy.h"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string_view>

#include "kiln/float16.h"

namespace kiln::npy {
namespace {

static_assert(std::endian::native == std::endian::little,
              "npy.cpp copies little-endian file data as is: a big-endian host needs byte swaps");

constexpr uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kPreambleV1 = 10;  // magic, version, uint16 header length
constexpr size_t kPreambleV2 = 12;  // magic, version, uint32 header length
// NumPy itself refuses headers over 10000 bytes unless told otherwise; a real header for at most
// eight dims is far below this, so anything larger is corrupt or hostile.
constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kAlignment = 64;

struct Dtype {
  std::string_view descr;
  DataType type;
  size_t size;
};
constexpr Dtype kDtypes[] = {
    {"<f4", DataType::kFLOAT, 4}, {"<f2", DataType::kHALF, 2},  {"|i1", DataType::kINT8, 1},
    {"<i4", DataType::kINT32, 4}, {"<i8", DataType::kINT64, 8}, {"|b1", DataType::kBOOL, 1},
};
constexpr std::string_view kSupportedList = "'<f4', '<f2', '|i1', '<i4', '<i8', '|b1'";

const Dtype* dtypeFor(DataType type) {
  for (const Dtype& d : kDtypes)
    if (d.type == type) return &d;
  return nullptr;
}

const Dtype* dtypeFor(std::string_view descr) {
  // '=' is native order, which is little-endian here; one-byte types may carry any order mark.
  std::string normal(descr);
  if (normal.size() == 3 && normal[0] == '=') normal[0] = '<';
  if (normal.size() == 3 && normal[2] == '1' && (normal[0] == '<' || normal[0] == '>'))
    normal[0] = '|';
  for (const Dtype& d : kDtypes)
    if (d.descr == normal) return &d;
  return nullptr;
}

// Product of the dims, or -1 if a dim is negative or the product overflows int64.
int64_t checkedVolume(const Dims& dims) {
  int64_t v = 1;
  for (int32_t i = 0; i < dims.nbDims; ++i) {
    if (dims.d[i] < 0) return -1;
    if (dims.d[i] != 0 && v > std::numeric_limits<int64_t>::max() / dims.d[i]) return -1;
    v *= dims.d[i];
  }
  return v;
}

std::string shapeText(const Dims& dims) {
  std::string s = "(";
  for (int32_t i = 0; i < dims.nbDims; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims.d[i]);
  }
  if (dims.nbDims == 1) s += ",";
  return s + ")";
}

// ---- reading ------------------------------------------------------------------------------------

struct Preamble {
  size_t headerOffset = 0;
  size_t headerLength = 0;
};

// `p` holds the first `n` bytes of a file of `total` bytes.
Status parsePreamble(const uint8_t* p, size_t n, uint64_t total, Preamble& pre,
                     const std::string& what) {
  if (n < 8 || std::memcmp(p, kMagic, sizeof kMagic) != 0)
    return corruptData(what + ": not an .npy file (it does not start with \"\\x93NUMPY\")");
  const int major = p[6], minor = p[7];
  if (major < 1 || major > 3 || minor != 0)
    return unsupported(what + ": .npy format version " + std::to_string(major) + "." +
                       std::to_string(minor) + " is not supported (only 1.0, 2.0 and 3.0)");
  if (major == 1) {
    if (n < kPreambleV1) return corruptData(what + ": truncated in the .npy preamble");
    pre.headerOffset = kPreambleV1;
    pre.headerLength = static_cast<size_t>(p[8]) | static_cast<size_t>(p[9]) << 8;
  } else {
    if (n < kPreambleV2) return corruptData(what + ": truncated in the .npy preamble");
    pre.headerOffset = kPreambleV2;
    pre.headerLength = static_cast<size_t>(p[8]) | static_cast<size_t>(p[9]) << 8 |
                       static_cast<size_t>(p[10]) << 16 | static_cast<size_t>(p[11]) << 24;
  }
  if (pre.headerLength > kMaxHeaderBytes)
    return corruptData(what + ": header length " + std::to_string(pre.headerLength) +
                       " exceeds the limit of " + std::to_string(kMaxHeaderBytes) + " bytes");
  if (pre.headerOffset + pre.headerLength > total)
    return corruptData(what + ": header of " + std::to_string(pre.headerLength) +
                       " bytes runs past the end of the data (" + std::to_string(total) +
                       " bytes in all)");
  return Status::ok();
}

struct Header {
  const Dtype* dtype = nullptr;
  Dims dims;
};

// A parser for the small subset of Python literal syntax that .npy headers use.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  Status parse(Header& h) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!eat('{')) return error("expected '{' at the start of the header");
    for (;;) {
      skipSpace();
      if (eat('}')) break;
      std::string key;
      KILN_RETURN_IF_ERROR(parseString(key));
      skipSpace();
      if (!eat(':')) return error("expected ':' after key '" + key + "'");
      skipSpace();
      if (key == "descr") {
        if (haveDescr) return error("duplicate key 'descr'");
        haveDescr = true;
        KILN_RETURN_IF_ERROR(parseDescr(h));
      } else if (key == "fortran_order") {
        if (haveOrder) return error("duplicate key 'fortran_order'");
        haveOrder = true;
        bool fortran = false;
        KILN_RETURN_IF_ERROR(parseBool(fortran));
        if (fortran)
          return Status(StatusCode::kUnsupported,
                        what_ +
                            ": array is in Fortran order; only C order is supported "
                            "(save it with numpy.ascontiguousarray first)");
      } else if (key == "shape") {
        if (haveShape) return error("duplicate key 'shape'");
        haveShape = true;
        KILN_RETURN_IF_ERROR(parseShape(h.dims));
      } else {
        return error("unexpected key '" + key + "'");
      }
      skipSpace();
      if (eat(',')) continue;
      skipSpace();
      if (eat('}')) break;
      return error("expected ',' or '}' after the value of '" + key + "'");
    }
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\0')) ++pos_;
    if (pos_ != s_.size()) return error("unexpected text after the closing '}'");
    if (!haveDescr || !haveOrder || !haveShape)
      return error("the header must have the keys 'descr', 'fortran_order' and 'shape'");
    return Status::ok();
  }

 private:
  Status error(const std::string& m) const {
    return corruptData(what_ + ": malformed header at byte " + std::to_string(pos_) + ": " + m);
  }
  void skipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool eatWord(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  Status parseString(std::string& out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
      return error("expected a quoted string");
    const char quote = s_[pos_++];
    const size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\') return error("escapes in strings are not supported");
      ++pos_;
    }
    if (pos_ >= s_.size()) return error("unterminated string");
    out.assign(s_.substr(start, pos_ - start));
    ++pos_;
    return Status::ok();
  }

  Status parseDescr(Header& h) {
    if (pos_ < s_.size() && s_[pos_] == '[')
      return Status(StatusCode::kUnsupported,
                    what_ + ": structured dtypes are not supported (supported: " +
                        std::string(kSupportedList) + ")");
    std::string descr;
    KILN_RETURN_IF_ERROR(parseString(descr));
    h.dtype = dtypeFor(descr);
    if (h.dtype) return Status::ok();
    std::string why;
    if (!descr.empty() && descr[0] == '>') why = " (big-endian data is not supported)";
    return Status(StatusCode::kUnsupported,
                  what_ + ": dtype '" + descr + "' is not supported" + why + "; supported: " +
                      std::string(kSupportedList) + " (convert with numpy's astype first)");
  }

  Status parseBool(bool& out) {
    if (eatWord("True")) {
      out = true;
    } else if (eatWord("False")) {
      out = false;
    } else {
      return error("expected True or False for 'fortran_order'");
    }
    return Status::ok();
  }

  Status parseShape(Dims& dims) {
    if (!eat('(')) return error("expected '(' to start 'shape'");
    dims = Dims();
    for (;;) {
      skipSpace();
      if (eat(')')) return Status::ok();
      if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9')
        return error("expected a non-negative integer in 'shape'");
      int64_t v = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        const int digit = s_[pos_++] - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return error("a dimension in 'shape' overflows int64");
        v = v * 10 + digit;
      }
      eat('L');  // Python 2 wrote long integers as 3L
      if (dims.nbDims == Dims::kMaxDims)
        return Status(StatusCode::kUnsupported, what_ + ": arrays of more than " +
                                                    std::to_string(Dims::kMaxDims) +
                                                    " dimensions are not supported");
      dims.d[dims.nbDims++] = v;
      skipSpace();
      if (eat(',')) continue;
      if (eat(')')) return Status::ok();
      return error("expected ',' or ')' in 'shape'");
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  const std::string& what_;
};

// How many data bytes the header promises; fails unless exactly `available` bytes follow it.
Status expectedDataBytes(const Header& h, uint64_t available, size_t& bytes,
                         const std::string& what) {
  const int64_t count = checkedVolume(h.dims);
  if (count < 0 || static_cast<uint64_t>(count) > std::numeric_limits<uint64_t>::max() / 8)
    return corruptData(what + ": shape " + shapeText(h.dims) + " has too many elements");
  const uint64_t need = static_cast<uint64_t>(count) * h.dtype->size;
  if (need > available)
    return corruptData(what + ": shape " + shapeText(h.dims) + " of '" +
                       std::string(h.dtype->descr) + "' needs " + std::to_string(need) +
                       " data bytes but only " + std::to_string(available) + " follow the header");
  if (need < available)
    return corruptData(what + ": " + std::to_string(available - need) +
                       " unexpected bytes after the data of shape " + shapeText(h.dims));
  if (need > std::numeric_limits<size_t>::max())
    return unsupported(what + ": too large for this platform");
  bytes = static_cast<size_t>(need);
  return Status::ok();
}

Status checkBools(const std::vector<uint8_t>& data, const std::string& what) {
  for (size_t i = 0; i < data.size(); ++i)
    if (data[i] > 1)
      return corruptData(what + ": bool element " + std::to_string(i) + " has the value " +
                         std::to_string(data[i]) + " (must be 0 or 1)");
  return Status::ok();
}

// ---- writing ------------------------------------------------------------------------------------

// The header (preamble included) and the data bytes in file form, after validating `array`.
Status prepare(const NpyArray& array, std::string& header, const Dtype*& dtype) {
  const bool bf16 = array.type == DataType::kBF16;
  dtype = bf16 ? dtypeFor(DataType::kFLOAT) : dtypeFor(array.type);
  if (!dtype)
    return unsupported("writeNpy: data type " + std::to_string(static_cast<int>(array.type)) +
                       " has no .npy form");
  if (array.dims.nbDims < 0 || array.dims.nbDims > Dims::kMaxDims)
    return invalidArgument("writeNpy: rank " + std::to_string(array.dims.nbDims) +
                           " is outside [0, " + std::to_string(Dims::kMaxDims) + "]");
  const int64_t count = checkedVolume(array.dims);
  if (count < 0)
    return invalidArgument("writeNpy: shape " + shapeText(array.dims) +
                           " has a negative dimension or too many elements");
  const size_t inSize = bf16 ? 2 : dtype->size;
  if (static_cast<uint64_t>(count) > std::numeric_limits<size_t>::max() / 8 ||
      array.data.size() != static_cast<size_t>(count) * inSize)
    return invalidArgument("writeNpy: shape " + shapeText(array.dims) + " needs " +
                           std::to_string(static_cast<uint64_t>(count) * inSize) +
                           " bytes of data but the array holds " +
                           std::to_string(array.data.size()));
  if (array.type == DataType::kBOOL) KILN_RETURN_IF_ERROR(checkBools(array.data, "writeNpy"));

  std::string dict = "{'descr': '" + std::string(dtype->descr) +
                     "', 'fortran_order': False, 'shape': " + shapeText(array.dims) + ", }";
  // Pad with spaces and end with '\n' so that the data starts on a 64-byte boundary, as NumPy
  // does. At most eight dims always fit version 1.0's uint16 length.
  const size_t unpadded = kPreambleV1 + dict.size() + 1;
  dict.append((kAlignment - unpadded % kAlignment) % kAlignment, ' ');
  dict += '\n';
  header.assign(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(dict.size() & 0xff);
  header += static_cast<char>(dict.size() >> 8);
  header += dict;
  return Status::ok();
}

// Appends the data as it goes into the file (bfloat16 widened to float32).
void appendData(const NpyArray& array, std::vector<uint8_t>& out) {
  if (array.type != DataType::kBF16) {
    out.insert(out.end(), array.data.begin(), array.data.end());
    return;
  }
  const size_t n = array.data.size() / 2;
  const size_t at = out.size();
  out.resize(at + n * 4);
  for (size_t i = 0; i < n; ++i) {
    uint16_t b;
    std::memcpy(&b, array.data.data() + 2 * i, 2);
    const float f = bf16ToFloat(b);
    std::memcpy(out.data() + at + 4 * i, &f, 4);
  }
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

}  // namespace

Status decodeNpy(const void* bytes, size_t length, NpyArray& out, const std::string& what) {
  const uint8_t* p = static_cast<const uint8_t*>(bytes);
  if (!p) length = 0;
  Preamble pre;
  KILN_RETURN_IF_ERROR(parsePreamble(p, length, length, pre, what));
  Header h;
  KILN_RETURN_IF_ERROR(
      HeaderParser(
          std::string_view(reinterpret_cast<const char*>(p) + pre.headerOffset, pre.headerLength),
          what)
          .parse(h));
  const size_t dataOffset = pre.headerOffset + pre.headerLength;
  size_t n = 0;
  KILN_RETURN_IF_ERROR(expectedDataBytes(h, length - dataOffset, n, what));
  NpyArray a;
  a.type = h.dtype->type;
  a.dims = h.dims;
  a.data.assign(p + dataOffset, p + dataOffset + n);
  if (a.type == DataType::kBOOL) KILN_RETURN_IF_ERROR(checkBools(a.data, what));
  out = std::move(a);
  return Status::ok();
}

Status readNpy(const std::string& path, NpyArray& out) {
  const std::string what = "npy file '" + path + "'";
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) return notFound(what + ": no such file");
  if (!std::filesystem::is_regular_file(st)) return invalidArgument(what + ": not a regular file");
  const uint64_t total = std::filesystem::file_size(path, ec);
  if (ec) return ioError(what + ": cannot get its size: " + ec.message());

  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return ioError(what + ": cannot open: " + std::strerror(errno));
  uint8_t pre[kPreambleV2] = {};
  const size_t got = std::fread(pre, 1, sizeof pre, f.get());
  Preamble p;
  KILN_RETURN_IF_ERROR(parsePreamble(pre, got, total, p, what));

  // The preamble checked the header length against the file size, so this allocation is bounded.
  std::string text(p.headerLength, '\0');
  if (std::fseek(f.get(), static_cast<long>(p.headerOffset), SEEK_SET) != 0 ||
      std::fread(text.data(), 1, text.size(), f.get()) != text.size())
    return ioError(what + ": cannot read the header");
  Header h;
  KILN_RETURN_IF_ERROR(HeaderParser(text, what).parse(h));

  size_t n = 0;
  KILN_RETURN_IF_ERROR(expectedDataBytes(h, total - p.headerOffset - p.headerLength, n, what));
  NpyArray a;
  a.type = h.dtype->type;
  a.dims = h.dims;
  a.data.resize(n);
  if (std::fread(a.data.data(), 1, n, f.get()) != n)
    return ioError(what + ": the file ended while reading " + std::to_string(n) + " data bytes");
  if (a.type == DataType::kBOOL) KILN_RETURN_IF_ERROR(checkBools(a.data, what));
  out = std::move(a);
  return Status::ok();
}

Status encodeNpy(const NpyArray& array, std::vector<uint8_t>& out) {
  std::string header;
  const Dtype* dtype = nullptr;
  KILN_RETURN_IF_ERROR(prepare(array, header, dtype));
  std::vector<uint8_t> bytes(header.begin(), header.end());
  appendData(array, bytes);
  out = std::move(bytes);
  return Status::ok();
}

Status writeNpy(const std::string& path, const NpyArray& array) {
  std::vector<uint8_t> bytes;
  KILN_RETURN_IF_ERROR(encodeNpy(array, bytes).withContext("npy file '" + path + "'"));
  File f(std::fopen(path.c_str(), "wb"));
  if (!f)
    return ioError("npy file '" + path + "': cannot open for writing: " + std::strerror(errno));
  const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f.get()) == bytes.size();
  const bool closed = std::fclose(f.release()) == 0;
  if (!wrote || !closed) {
    const std::string why = std::strerror(errno);
    std::remove(path.c_str());  // leave no half-written file behind
    return ioError("npy file '" + path + "': write failed: " + why);
  }
  return Status::ok();
}

}  // namespace kiln::npy
