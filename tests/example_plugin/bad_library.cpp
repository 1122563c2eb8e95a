// Libraries that kiln must refuse to load, each with a clear error. Built three times:
//   KILN_BAD_LIBRARY=0  no entry point at all
//   KILN_BAD_LIBRARY=1  an entry point reporting another plugin ABI version
//   KILN_BAD_LIBRARY=2  an entry point that returns nullptr
#include "kiln/plugin.h"

extern "C" __attribute__((visibility("default"))) int kilnTestNotAPluginLibrary() { return 42; }

#if KILN_BAD_LIBRARY == 1
static const kiln::PluginLibraryInfo kInfo{kiln::kPluginAbiVersion + 1000, 0, nullptr};
extern "C" __attribute__((visibility("default"))) const kiln::PluginLibraryInfo*
kilnGetPluginLibrary() {
  return &kInfo;
}
#elif KILN_BAD_LIBRARY == 2
extern "C" __attribute__((visibility("default"))) const kiln::PluginLibraryInfo*
kilnGetPluginLibrary() {
  return nullptr;
}
#endif
