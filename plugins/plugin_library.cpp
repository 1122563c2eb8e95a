// The entry points of libkiln_plugins: the C function that kiln's loader looks up after
// dlopen(), and the C++ functions that let a program linked against the library register it
// without dlopen().
#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "crop_and_resize/crop_and_resize_creator.h"
#include "kiln/plugins.h"

namespace kiln {

const PluginLibraryInfo* getBuiltinPluginLibrary() {
  static IPluginCreator* const kCreators[] = {&plugins::cropAndResizeCreator()};
  static const PluginLibraryInfo kInfo{
      kPluginAbiVersion, static_cast<int32_t>(sizeof kCreators / sizeof *kCreators), kCreators};
  return &kInfo;
}

const char* getBuiltinPluginLibraryPath() {
  static const std::string path = [] {
    Dl_info info{};
    // Any address inside this library names the file it was loaded from.
    if (dladdr(reinterpret_cast<const void*>(&getBuiltinPluginLibrary), &info) && info.dli_fname)
      return std::string(info.dli_fname);
    return std::string();
  }();
  return path.c_str();
}

}  // namespace kiln

extern "C" KILN_PLUGINS_API const kiln::PluginLibraryInfo* kilnGetPluginLibrary() {
  return kiln::getBuiltinPluginLibrary();
}
static_assert(std::is_same_v<decltype(&kilnGetPluginLibrary), KilnGetPluginLibraryFn>);
