// kiln's own plugin library, libkiln_plugins (CropAndResize, ...). It is built like any
// third-party plugin library and can be loaded with PluginRegistry::loadLibrary(); a program that
// links it can instead register it directly:
//
//   kiln::PluginRegistry::global().registerLibrary(*kiln::getBuiltinPluginLibrary(),
//                                                  kiln::getBuiltinPluginLibraryPath());
#pragma once

#include "kiln/plugin.h"

#if defined(__GNUC__)
#define KILN_PLUGINS_API __attribute__((visibility("default")))
#else
#define KILN_PLUGINS_API
#endif

namespace kiln {

// The same creators that the library's kilnGetPluginLibrary() entry point returns. They live as
// long as the library is loaded.
KILN_PLUGINS_API const PluginLibraryInfo* getBuiltinPluginLibrary();

// The file the library was loaded from (for plugin records in plans), or "" if unknown.
KILN_PLUGINS_API const char* getBuiltinPluginLibraryPath();

}  // namespace kiln
