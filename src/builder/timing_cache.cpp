#include "builder/timing_cache.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/byte_io.h"
#include "core/checksum.h"
#include "core/plan_codec.h"
#include "core/version.h"

namespace kiln {
namespace {

constexpr const char* kHeader = "kiln-timing-cache 1";

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string TimingCache::key(const Backend& backend, const KernelConfig& config) {
  // The signature is hashed from the same bytes the plan stores for the layer, plus every
  // tensor's description, so any change in what the kernel sees changes the key.
  std::vector<uint8_t> bytes;
  ByteWriter w(bytes);
  w.u32(static_cast<uint32_t>(config.type));
  if (!plan::writeLayerParams(w, config.type, config.params).isOk()) return {};
  for (const auto* list : {&config.inputs, &config.outputs}) {
    w.u32(static_cast<uint32_t>(list->size()));
    for (const PluginTensorDesc& d : *list) {
      plan::writeDims(w, d.dims);
      w.u32(static_cast<uint32_t>(d.type));
      w.u32(static_cast<uint32_t>(d.format));
    }
  }
  // Whether weights are constant changes which tactics apply (prepacking).
  for (const void* c : config.constantInputs) w.u8(c ? 1 : 0);
  return backend.timingDeviceName() + "|" + kilnVersion() + "|" + layerTypeName(config.type) + "|" +
         hex64(crc64(bytes.data(), bytes.size()));
}

Status TimingCache::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::ok();  // no cache yet
  std::string line;
  if (!std::getline(in, line) || line != kHeader) {
    return corruptData("timing cache '" + path + "' does not start with '" + kHeader +
                       "'; delete it to start afresh");
  }
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string key, tactic, ms;
    if (!std::getline(fields, key, '\t') || !std::getline(fields, tactic, '\t') ||
        !std::getline(fields, ms)) {
      return corruptData("timing cache '" + path + "' line " + std::to_string(number) +
                         ": expected key<TAB>tactic<TAB>milliseconds");
    }
    char* end = nullptr;
    const double value = std::strtod(ms.c_str(), &end);
    if (end == ms.c_str() || *end != '\0' || !(value >= 0)) {
      return corruptData("timing cache '" + path + "' line " + std::to_string(number) +
                         ": bad time '" + ms + "'");
    }
    entries_[key] = Entry{tactic, value};
  }
  return Status::ok();
}

Status TimingCache::save(const std::string& path) const {
  // ResNet-50's warm builds re-timed the all-linear format alternative every time (8 of their 10 s
  // on an H100): the alternative's session saved its timings, then the main session's workspace
  // trade saved the main cache, loaded before them, over the file.
  TimingCache merged;
  if (!merged.load(path)) merged.entries_.clear();
  for (const auto& [key, entry] : entries_)
    if (recorded_.count(key) != 0 || merged.entries_.count(key) == 0) merged.entries_[key] = entry;
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    if (!out) return ioError("cannot write timing cache '" + temp + "'");
    out << kHeader << '\n';
    for (const auto& [key, entry] : merged.entries_)
      out << key << '\t' << entry.tactic << '\t' << entry.ms << '\n';
    if (!out) return ioError("cannot write timing cache '" + temp + "'");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    return ioError("cannot replace timing cache '" + path + "'");
  }
  return Status::ok();
}

bool TimingCache::find(const std::string& key, std::string& tactic, double& ms) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  tactic = it->second.tactic;
  ms = it->second.ms;
  return true;
}

void TimingCache::record(const std::string& key, const std::string& tactic, double ms) {
  if (key.empty()) return;
  entries_[key] = Entry{tactic, ms};
  recorded_.insert(key);
}

}  // namespace kiln
