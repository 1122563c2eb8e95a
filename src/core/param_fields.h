// What is derived from an op's field list (the `fields` visitor next to each parameter struct in
// kiln/ops/<op>.h): byte encoding for the plan and the timing cache, decoding with every enum and
// bool checked, JSON for `kiln inspect`, and equality. A parameter struct describes its fields
// once; nothing here names an op.
//
// Field kinds: bool, int32_t, uint32_t, int64_t, float, double, enums with an `enumCount(E)`
// overload beside them, Dims, and fixed arrays of int32_t, int64_t or float.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "core/byte_io.h"
#include "core/layer_params.h"
#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln::param_fields {

// Dims: i32 nbDims in [0, 8], then nbDims i64. Values are not checked here (reshape dims may hold
// 0 and -1); shape rules check what they mean.
void writeDims(ByteWriter& w, const Dims& dims);
Status readDims(ByteReader& r, Dims& dims, const char* field);

// Appends the fields of `p` to `w`, in field order.
struct Writer {
  ByteWriter& w;
  void operator()(const char*, bool v) { w.boolean(v); }
  void operator()(const char*, int32_t v) { w.i32(v); }
  void operator()(const char*, uint32_t v) { w.u32(v); }
  void operator()(const char*, int64_t v) { w.i64(v); }
  void operator()(const char*, float v) { w.f32(v); }
  void operator()(const char*, double v) { w.f64(v); }
  void operator()(const char*, const Dims& v) { writeDims(w, v); }
  template <class E>
  requires std::is_enum_v<E>
  void operator()(const char*, E v) { w.u32(static_cast<uint32_t>(v)); }
  template <class T, size_t N>
  void operator()(const char* name, const T (&v)[N]) {
    for (const T& x : v) (*this)(name, x);
  }
};

// Reads the fields of `p` from `r`; the first failure is kept in `status` and stops the rest.
// Field names in errors are "<layer> <field>" ("Convolution kernelH").
struct Reader {
  ByteReader& r;
  const char* layer;
  Status status;
  std::string label;
  const char* name(const char* field) {
    label = std::string(layer) + " " + field;
    return label.c_str();
  }
  void operator()(const char* f, bool& v) {
    if (status) status = r.boolean(v, name(f));
  }
  void operator()(const char* f, int32_t& v) {
    if (status) status = r.i32(v, name(f));
  }
  void operator()(const char* f, uint32_t& v) {
    if (status) status = r.u32(v, name(f));
  }
  void operator()(const char* f, int64_t& v) {
    if (status) status = r.i64(v, name(f));
  }
  void operator()(const char* f, float& v) {
    if (status) status = r.f32(v, name(f));
  }
  void operator()(const char* f, double& v) {
    if (status) status = r.f64(v, name(f));
  }
  void operator()(const char* f, Dims& v) {
    if (status) status = readDims(r, v, name(f));
  }
  template <class E>
  requires std::is_enum_v<E>
  void operator()(const char* f, E& v) {
    if (status) status = r.enumValue(v, enumCount(E{}), name(f));
  }
  template <class T, size_t N>
  void operator()(const char* f, T (&v)[N]) {
    for (T& x : v) (*this)(f, x);
  }
};

// `{"axis": -1, "log": false}`; enums as their numbers, arrays and dims as JSON arrays.
struct JsonWriter {
  std::string out = "{";
  bool first = true;
  void key(const char* name) {
    out += first ? "\"" : ", \"";
    first = false;
    out += name;
    out += "\": ";
  }
  static std::string number(double v);
  void value(bool v) { out += v ? "true" : "false"; }
  void value(int32_t v) { out += std::to_string(v); }
  void value(uint32_t v) { out += std::to_string(v); }
  void value(int64_t v) { out += std::to_string(v); }
  void value(float v) { out += number(v); }
  void value(double v) { out += number(v); }
  void value(const Dims& d);
  template <class E>
  requires std::is_enum_v<E>
  void value(E v) { out += std::to_string(static_cast<int64_t>(v)); }
  template <class T, size_t N>
  void value(const T (&v)[N]) {
    out += "[";
    for (size_t i = 0; i < N; ++i) {
      if (i) out += ",";
      value(v[i]);
    }
    out += "]";
  }
  template <class T>
  void operator()(const char* name, const T& v) {
    key(name);
    value(v);
  }
};

// Finds the first enum field outside [0, enumCount): "<field> value <v>" in *why.
struct EnumChecker {
  std::string* why;
  bool ok = true;
  template <class T>
  void operator()(const char* name, const T& v) {
    if constexpr (std::is_enum_v<T>) {
      const auto x = static_cast<int64_t>(v);
      if (ok && (x < 0 || x >= enumCount(T{}))) {
        ok = false;
        if (why) *why = std::string(name) + " value " + std::to_string(x);
      }
    }
  }
};

// Applies `f(params)` to the parameter struct a LayerParams holds (nothing for monostate).
template <class F>
void visitParams(const LayerParams& params, F&& f) {
  std::visit(
      [&](const auto& p) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(p)>, std::monostate>) f(p);
      },
      params);
}

// The fields of the parameters as bytes (monostate: none).
void encode(const LayerParams& params, ByteWriter& w);
// The parameters of a layer of `type`, decoded field by field (monostate for constants and
// plugins); corrupt data for an invalid type, enum or bool.
Status decode(ByteReader& r, LayerType type, LayerParams& params);
// The parameters as a JSON object ("{}" for monostate).
std::string toJson(const LayerParams& params);
// Whether every enum field holds one of its values; else false with *why naming the field.
bool enumsValid(const LayerParams& params, std::string* why);
// Same alternative and the same bytes field by field (floats by bits, so NaN equals itself).
bool equal(const LayerParams& a, const LayerParams& b);

}  // namespace kiln::param_fields
