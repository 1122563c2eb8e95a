// The plugin registry: creators keyed by (name, version, namespace), and plugin libraries.
//
// Duplicate policy: registering a creator under a key that is taken succeeds without change if
// it is the very same creator object, or one from a library with the same content hash (the same
// library loaded twice); otherwise it is refused with an error naming both sources. The first
// registration always stays in force.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/plugin.h"
#include "kiln/status.h"

namespace kiln {

struct PluginCreatorInfo {
  std::string name;
  std::string version;
  std::string pluginNamespace;
  std::string libraryName;  // file name of the library it came from, or "" when registered in code
  std::string libraryHash;  // hex digest of that library's bytes, or ""
};

class PluginRegistry {
 public:
  // The process-wide registry (plans look plugins up here).
  static PluginRegistry& global();

  // Registers a creator made in the calling program. The creator must outlive its registration.
  virtual Status registerCreator(IPluginCreator& creator, const char* pluginNamespace) = 0;
  // dlopen()s a plugin library, checks its ABI version and registers all its creators under the
  // namespace "". Loading the same library again is harmless.
  virtual Status loadLibrary(const std::string& path) = 0;
  // Registers the creators of a library already linked into the process. `libraryPath` is the
  // file the code came from (its name and hash go into plans).
  virtual Status registerLibrary(const PluginLibraryInfo& info, const std::string& libraryPath) = 0;
  virtual Status deregisterCreator(const char* name, const char* version,
                                   const char* pluginNamespace) = 0;

  virtual IPluginCreator* getCreator(const char* name, const char* version,
                                     const char* pluginNamespace) = 0;
  virtual std::vector<PluginCreatorInfo> listCreators() = 0;
  // Where the creator for this key came from; false if none is registered.
  virtual bool getCreatorInfo(const char* name, const char* version, const char* pluginNamespace,
                              PluginCreatorInfo& info) = 0;

 protected:
  virtual ~PluginRegistry() = default;
};

// Lifecycle tracing (DESIGN.md §2). The engine writes one JSON line per creator and plugin call.
// KILN_TRACE=<path> (or "-" for standard error) turns it on at first use; these override it.
Status setTracePath(const std::string& path);  // "" turns tracing off
void flushTrace();

}  // namespace kiln
