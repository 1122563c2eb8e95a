#include "core/param_fields.h"

#include <cstdio>
#include <cstring>

namespace kiln::param_fields {

void writeDims(ByteWriter& w, const Dims& dims) {
  w.i32(dims.nbDims);
  const int32_t n = dims.nbDims < 0 || dims.nbDims > Dims::kMaxDims ? 0 : dims.nbDims;
  for (int32_t i = 0; i < n; ++i) w.i64(dims.d[i]);
}

Status readDims(ByteReader& r, Dims& dims, const char* field) {
  const size_t at = r.offset();
  int32_t n = 0;
  KILN_RETURN_IF_ERROR(r.i32(n, field));
  if (n < 0 || n > Dims::kMaxDims)
    return r.errorAt(at, std::string(field) + " has rank " + std::to_string(n) + ", outside [0, " +
                             std::to_string(Dims::kMaxDims) + "]");
  dims = Dims{};
  dims.nbDims = n;
  for (int32_t i = 0; i < n; ++i) KILN_RETURN_IF_ERROR(r.i64(dims.d[i], field));
  return Status::ok();
}

std::string JsonWriter::number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  // JSON has no NaN or infinity: they are written as strings.
  if (std::strchr(buf, 'n') || std::strchr(buf, 'i')) return std::string("\"") + buf + "\"";
  return buf;
}

void JsonWriter::value(const Dims& d) {
  out += "[";
  const int32_t n = d.nbDims < 0 || d.nbDims > Dims::kMaxDims ? 0 : d.nbDims;
  for (int32_t i = 0; i < n; ++i) {
    if (i) out += ",";
    out += std::to_string(d.d[i]);
  }
  out += "]";
}

void encode(const LayerParams& params, ByteWriter& w) {
  visitParams(params, [&](const auto& p) {
    using P = std::decay_t<decltype(p)>;
    P::fields(p, Writer{w});
  });
}

namespace {

template <class P>
Status decodeAs(ByteReader& r, LayerParams& params) {
  P p{};
  Reader reader{r, layerTypeName(LayerTypeOf<P>::value), Status::ok(), {}};
  P::fields(p, reader);
  KILN_RETURN_IF_ERROR(reader.status);
  params = p;
  return Status::ok();
}

}  // namespace

Status decode(ByteReader& r, LayerType type, LayerParams& params) {
  switch (type) {
    case LayerType::kCONSTANT:
    case LayerType::kPLUGIN:
      params = std::monostate{};
      return Status::ok();
#define KILN_DECODE_CASE(ENUM, VALUE, NAME) \
  case LayerType::k##ENUM:                  \
    return decodeAs<NAME##Params>(r, params);
      KILN_BUILTIN_OPS(KILN_DECODE_CASE)
#undef KILN_DECODE_CASE
  }
  return r.errorAt(r.offset(), "invalid layer type " + std::to_string(static_cast<int32_t>(type)));
}

std::string toJson(const LayerParams& params) {
  JsonWriter json;
  visitParams(params, [&](const auto& p) {
    using P = std::decay_t<decltype(p)>;
    P::fields(p, json);
  });
  return json.out + "}";
}

bool enumsValid(const LayerParams& params, std::string* why) {
  EnumChecker check{why};
  visitParams(params, [&](const auto& p) {
    using P = std::decay_t<decltype(p)>;
    P::fields(p, check);
  });
  return check.ok;
}

bool equal(const LayerParams& a, const LayerParams& b) {
  if (a.index() != b.index()) return false;
  std::vector<uint8_t> x, y;
  ByteWriter wx(x), wy(y);
  encode(a, wx);
  encode(b, wy);
  return x == y;
}

}  // namespace kiln::param_fields
