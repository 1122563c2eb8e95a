// The process-wide plugin registry and plugin-library loading.
#include "kiln/registry.h"

#include <dlfcn.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <tuple>

#include "core/checksum.h"
#include "core/log.h"

namespace kiln {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;  // name, version, namespace

struct Entry {
  IPluginCreator* creator = nullptr;
  PluginCreatorInfo info;
};

std::string baseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Hex CRC-64 of a file's bytes: names the exact build of a library in plans and errors.
Status hashFile(const std::string& path, std::string& hex) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ioError("cannot open '" + path + "'");
  uint64_t state = kCrc64Init;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    state = crc64Update(state, buffer, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return ioError("cannot read '" + path + "'");
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, crc64Final(state));
  hex = text;
  return Status::ok();
}

std::string describeKey(const Key& key) {
  return "plugin " + std::get<0>(key) + " version " + std::get<1>(key) + " namespace '" +
         std::get<2>(key) + "'";
}

std::string describeSource(const PluginCreatorInfo& info) {
  if (info.libraryName.empty()) return "registered in code";
  return "from library " + info.libraryName + " (hash " + info.libraryHash + ")";
}

class Registry final : public PluginRegistry {
 public:
  Status registerCreator(IPluginCreator& creator, const char* pluginNamespace) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return addLocked(creator, pluginNamespace ? pluginNamespace : "", "", "");
  }

  Status loadLibrary(const std::string& path) override {
    if (path.empty()) return invalidArgument("plugin library path is empty");
    std::string hash;
    KILN_RETURN_IF_ERROR(hashFile(path, hash).withContext("loading plugin library"));
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      return invalidArgument("cannot load plugin library '" + path +
                             "': " + (e ? e : "dlopen failed"));
    }
    auto entry =
        reinterpret_cast<KilnGetPluginLibraryFn>(dlsym(handle, KILN_PLUGIN_LIBRARY_ENTRY_NAME));
    if (!entry) {
      dlclose(handle);
      return invalidArgument("'" + path + "' is not a kiln plugin library: it does not export " +
                             KILN_PLUGIN_LIBRARY_ENTRY_NAME + "()");
    }
    // The library stays loaded for the life of the process: creators and plugin objects made
    // from it may be referenced by engines until exit.
    return registerFrom(entry(), path, hash);
  }

  Status registerLibrary(const PluginLibraryInfo& info, const std::string& libraryPath) override {
    std::string hash;
    if (!libraryPath.empty()) {
      Status s = hashFile(libraryPath, hash);
      if (!s) hash.clear();  // still usable; plans then carry no hash
    }
    return registerFrom(&info, libraryPath, hash);
  }

  Status deregisterCreator(const char* name, const char* version,
                           const char* pluginNamespace) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const Key key{name ? name : "", version ? version : "", pluginNamespace ? pluginNamespace : ""};
    if (entries_.erase(key) == 0) return notFound(describeKey(key) + " is not registered");
    return Status::ok();
  }

  IPluginCreator* getCreator(const char* name, const char* version,
                             const char* pluginNamespace) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(
        Key{name ? name : "", version ? version : "", pluginNamespace ? pluginNamespace : ""});
    return it == entries_.end() ? nullptr : it->second.creator;
  }

  std::vector<PluginCreatorInfo> listCreators() override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<PluginCreatorInfo> all;
    for (const auto& [key, entry] : entries_) all.push_back(entry.info);
    return all;
  }

  bool getCreatorInfo(const char* name, const char* version, const char* pluginNamespace,
                      PluginCreatorInfo& info) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(
        Key{name ? name : "", version ? version : "", pluginNamespace ? pluginNamespace : ""});
    if (it == entries_.end()) return false;
    info = it->second.info;
    return true;
  }

 private:
  Status registerFrom(const PluginLibraryInfo* info, const std::string& path,
                      const std::string& hash) {
    const std::string where = "plugin library '" + path + "'";
    if (!info) return invalidArgument(where + ": its entry point returned null");
    if (info->abiVersion != kPluginAbiVersion) {
      // Version 1 is the one users will meet: say what changed, so the port is obvious.
      const std::string changed =
          info->abiVersion == 1
              ? " (version 2 is the dynamic-shape form: configurePlugin() and getWorkspaceSize() "
                "take DynamicPluginTensorDesc, and context objects get onShapeChange())"
              : "";
      return unsupported(where + " was built for plugin ABI version " +
                         std::to_string(info->abiVersion) + ", this kiln has version " +
                         std::to_string(kPluginAbiVersion) + changed +
                         ": rebuild the library against this kiln's kiln/plugin.h");
    }
    if (info->nbCreators < 0 || (info->nbCreators > 0 && !info->creators)) {
      return invalidArgument(where + ": malformed creator list");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    // Validate everything first, so a library is registered whole or not at all.
    for (int32_t i = 0; i < info->nbCreators; ++i) {
      IPluginCreator* c = info->creators[i];
      if (!c || !c->getPluginName() || !c->getPluginVersion() || !*c->getPluginName()) {
        return invalidArgument(where + ": creator " + std::to_string(i) + " is null or unnamed");
      }
      const Key key{c->getPluginName(), c->getPluginVersion(), ""};
      auto it = entries_.find(key);
      if (it != entries_.end() && !isSameSource(it->second, *c, hash)) {
        return conflict(key, it->second.info, baseName(path), hash);
      }
    }
    for (int32_t i = 0; i < info->nbCreators; ++i) {
      KILN_RETURN_IF_ERROR(addLocked(*info->creators[i], "", baseName(path), hash));
    }
    return Status::ok();
  }

  static bool isSameSource(const Entry& existing, IPluginCreator& creator,
                           const std::string& hash) {
    if (existing.creator == &creator) return true;
    return !hash.empty() && existing.info.libraryHash == hash;
  }

  static Status conflict(const Key& key, const PluginCreatorInfo& existing,
                         const std::string& library, const std::string& hash) {
    PluginCreatorInfo incoming;
    incoming.libraryName = library;
    incoming.libraryHash = hash;
    return invalidArgument(describeKey(key) + " is already registered (" +
                           describeSource(existing) + "); refusing a second, different creator (" +
                           describeSource(incoming) +
                           "). Deregister the first or give the new one another namespace.");
  }

  Status addLocked(IPluginCreator& creator, const std::string& ns, const std::string& library,
                   const std::string& hash) {
    const char* name = creator.getPluginName();
    const char* version = creator.getPluginVersion();
    if (!name || !*name || !version)
      return invalidArgument("a plugin creator has no name or version");
    const Key key{name, version, ns};
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      if (isSameSource(it->second, creator, hash)) return Status::ok();  // harmless repeat
      return conflict(key, it->second.info, library, hash);
    }
    Entry entry;
    entry.creator = &creator;
    entry.info = PluginCreatorInfo{name, version, ns, library, hash};
    entries_.emplace(key, std::move(entry));
    logMessage(Severity::kVerbose,
               "registered " + describeKey(key) + " " + describeSource(entries_[key].info));
    return Status::ok();
  }

  std::mutex mutex_;
  std::map<Key, Entry> entries_;
};

}  // namespace

PluginRegistry& PluginRegistry::global() {
  // Never destroyed: engines torn down from static destructors may still look creators up.
  static Registry* registry = new Registry();
  return *registry;
}

}  // namespace kiln
