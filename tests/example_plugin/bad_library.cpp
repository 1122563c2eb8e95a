// Libraries that kiln must refuse to load, each with a clear error. Built four times:
//   KILN_BAD_LIBRARY=0  no entry point at all
//   KILN_BAD_LIBRARY=1  an entry point reporting another plugin ABI version
//   KILN_BAD_LIBRARY=2  an entry point that returns nullptr
//   KILN_BAD_LIBRARY=3  a library built for ABI version 1, before dynamic shapes
#include "kiln/plugin.h"

extern "C" __attribute__((visibility("default"))) int kilnTestNotAPluginLibrary() { return 42; }

#if KILN_BAD_LIBRARY == 1
static const kiln::PluginLibraryInfo kInfo{kiln::kPluginAbiVersion + 1000, 0, nullptr};
extern "C" __attribute__((visibility("default"))) const kiln::PluginLibraryInfo*
kilnGetPluginLibrary() {
  return &kInfo;
}
#elif KILN_BAD_LIBRARY == 3
// What a library compiled against the version-1 header reports (its IPlugin has the old
// configurePlugin/getWorkspaceSize and no onShapeChange, so its vtables do not fit).
static const kiln::PluginLibraryInfo kInfo{1, 0, nullptr};
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
