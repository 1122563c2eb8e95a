// PluginCheckField constructors and "k=v" parsing by the type the creator lists for the field.
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>

#include "kiln/plugin_check.h"

namespace kiln {
namespace {

template <typename T>
PluginCheckField make(const std::string& name, PluginFieldType type, const std::vector<T>& values) {
  PluginCheckField f;
  f.name = name;
  f.type = type;
  f.length = static_cast<int32_t>(values.size());
  const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
  f.data.assign(bytes, bytes + values.size() * sizeof(T));
  return f;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!s.empty() && s.back() == sep) parts.push_back("");
  return parts;
}

template <typename T>
bool parseNumbers(const std::string& text, std::vector<T>& out) {
  for (const std::string& p : split(text, ',')) {
    if (p.empty()) return false;
    size_t used = 0;
    try {
      if constexpr (std::is_floating_point_v<T>) {
        const double v = std::stod(p, &used);
        out.push_back(static_cast<T>(v));
      } else {
        const long long v = std::stoll(p, &used, 0);
        if (v < static_cast<long long>(std::numeric_limits<T>::min()) ||
            v > static_cast<long long>(std::numeric_limits<T>::max()))
          return false;
        out.push_back(static_cast<T>(v));
      }
    } catch (...) {
      return false;
    }
    if (used != p.size()) return false;
  }
  return !out.empty();
}

}  // namespace

PluginCheckField PluginCheckField::i32(const std::string& name, int32_t value) {
  return make<int32_t>(name, PluginFieldType::kINT32, {value});
}
PluginCheckField PluginCheckField::i64(const std::string& name, int64_t value) {
  return make<int64_t>(name, PluginFieldType::kINT64, {value});
}
PluginCheckField PluginCheckField::f32(const std::string& name, float value) {
  return make<float>(name, PluginFieldType::kFLOAT32, {value});
}
PluginCheckField PluginCheckField::f64(const std::string& name, double value) {
  return make<double>(name, PluginFieldType::kFLOAT64, {value});
}
PluginCheckField PluginCheckField::str(const std::string& name, const std::string& value) {
  return make<char>(name, PluginFieldType::kSTRING, std::vector<char>(value.begin(), value.end()));
}
PluginCheckField PluginCheckField::i32s(const std::string& name,
                                        const std::vector<int32_t>& values) {
  return make<int32_t>(name, PluginFieldType::kINT32, values);
}
PluginCheckField PluginCheckField::f32s(const std::string& name, const std::vector<float>& values) {
  return make<float>(name, PluginFieldType::kFLOAT32, values);
}

bool parsePluginCheckField(IPluginCreator& creator, const std::string& assignment,
                           PluginCheckField& field, std::string& error) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    error = "a field is written name=value, got '" + assignment + "'";
    return false;
  }
  const std::string name = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  const PluginFieldCollection* known = creator.getFieldNames();
  const PluginField* info = nullptr;
  std::string names;
  for (int32_t i = 0; known && known->fields && i < known->nbFields; ++i) {
    const PluginField& f = known->fields[i];
    if (!f.name) continue;
    if (!names.empty()) names += ", ";
    names += f.name;
    if (name == f.name) info = &f;
  }
  if (!info) {
    error = "the creator of " + std::string(creator.getPluginName()) + " lists no field '" + name +
            "' (it lists: " + (names.empty() ? std::string("none") : names) + ")";
    return false;
  }
  const std::string typeName = pluginFieldTypeName(info->type);
  bool ok = false;
  switch (info->type) {
    case PluginFieldType::kFLOAT32: {
      std::vector<float> v;
      ok = parseNumbers(value, v);
      if (ok) field = make(name, info->type, v);
      break;
    }
    case PluginFieldType::kFLOAT64: {
      std::vector<double> v;
      ok = parseNumbers(value, v);
      if (ok) field = make(name, info->type, v);
      break;
    }
    case PluginFieldType::kINT8: {
      std::vector<int8_t> v;
      ok = parseNumbers(value, v);
      if (ok) field = make(name, info->type, v);
      break;
    }
    case PluginFieldType::kINT16: {
      std::vector<int16_t> v;
      ok = parseNumbers(value, v);
      if (ok) field = make(name, info->type, v);
      break;
    }
    case PluginFieldType::kINT32: {
      std::vector<int32_t> v;
      ok = parseNumbers(value, v);
      if (ok) field = make(name, info->type, v);
      break;
    }
    case PluginFieldType::kINT64: {
      std::vector<int64_t> v;
      ok = parseNumbers(value, v);
      if (ok) field = make(name, info->type, v);
      break;
    }
    case PluginFieldType::kSTRING:
      field = PluginCheckField::str(name, value);
      ok = true;
      break;
    case PluginFieldType::kDIMS: {
      std::vector<Dims> all;
      ok = true;
      for (const std::string& one : split(value, ',')) {
        std::vector<int64_t> d;
        for (const std::string& p : split(one, 'x')) ok = ok && parseNumbers(p, d);
        if (!ok || d.size() > static_cast<size_t>(Dims::kMaxDims)) {
          ok = false;
          break;
        }
        Dims dims;
        for (int64_t x : d) dims.d[dims.nbDims++] = x;
        all.push_back(dims);
      }
      ok = ok && !all.empty();
      if (ok) field = make(name, info->type, all);
      break;
    }
  }
  if (!ok) {
    error = "field '" + name + "' is " + typeName + ": cannot read '" + value + "' as that" +
            (info->type == PluginFieldType::kDIMS ? " (write dims as 2x3x4)" : "");
    return false;
  }
  if (info->length > 0 && field.length != info->length && info->type != PluginFieldType::kSTRING) {
    error = "field '" + name + "' takes " + std::to_string(info->length) + " value(s), got " +
            std::to_string(field.length);
    return false;
  }
  return true;
}

}  // namespace kiln
