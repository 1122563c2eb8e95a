// The library's one exported symbol: kiln dlopen()s the library, looks this function up by
// KILN_PLUGIN_LIBRARY_ENTRY_NAME and registers every creator it lists.
#include "kiln/plugin.h"
#include "scale_bias_creator.h"

namespace {

// Creators must live as long as the library is loaded: static storage does that.
kiln_example::ScaleBiasCreator scaleBiasCreator;
kiln::IPluginCreator* const creators[] = {&scaleBiasCreator};
const kiln::PluginLibraryInfo libraryInfo{
    kiln::kPluginAbiVersion, static_cast<int32_t>(sizeof creators / sizeof creators[0]), creators};

}  // namespace

// Everything else in the library is hidden (CXX_VISIBILITY_PRESET hidden in CMakeLists.txt).
extern "C" __attribute__((visibility("default"))) const kiln::PluginLibraryInfo*
kilnGetPluginLibrary() {
  return &libraryInfo;
}

// A mismatch between this function and the type kiln calls it through is a compile error here,
// not a crash at load time.
[[maybe_unused]] static constexpr KilnGetPluginLibraryFn kEntryPointCheck = &kilnGetPluginLibrary;
