// The registry's duplicate policy and look-ups (library loading is tested in
// tests/example_plugin with a real out-of-tree library).
#include <gtest/gtest.h>

#include "kiln/registry.h"

namespace kiln {
namespace {

class FakeCreator final : public IPluginCreator {
 public:
  explicit FakeCreator(const char* version) : version_(version) {}
  const char* getPluginName() const noexcept override { return "RegistryFake"; }
  const char* getPluginVersion() const noexcept override { return version_; }
  const PluginFieldCollection* getFieldNames() noexcept override { return &fields_; }
  IPlugin* createPlugin(const char*, const PluginFieldCollection*) noexcept override {
    return nullptr;
  }
  IPlugin* deserializePlugin(const char*, const void*, size_t) noexcept override { return nullptr; }
  const char* getLastError() const noexcept override { return "fake"; }

 private:
  const char* version_;
  PluginFieldCollection fields_;
};

TEST(Registry, SameCreatorTwiceIsHarmlessADifferentOneIsRefused) {
  PluginRegistry& r = PluginRegistry::global();
  FakeCreator first("1"), second("1");
  ASSERT_TRUE(r.registerCreator(first, "reg.test").isOk());
  EXPECT_TRUE(r.registerCreator(first, "reg.test").isOk());
  Status s = r.registerCreator(second, "reg.test");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("already registered"), std::string::npos) << s.message();
  EXPECT_EQ(r.getCreator("RegistryFake", "1", "reg.test"), &first);  // the first stays
  // Another namespace or version is another key.
  EXPECT_TRUE(r.registerCreator(second, "reg.other").isOk());
  FakeCreator v2("2");
  EXPECT_TRUE(r.registerCreator(v2, "reg.test").isOk());
  EXPECT_EQ(r.getCreator("RegistryFake", "2", "reg.test"), &v2);
  PluginCreatorInfo info;
  ASSERT_TRUE(r.getCreatorInfo("RegistryFake", "1", "reg.test", info));
  EXPECT_EQ(info.libraryName, "");
  for (auto [v, ns] : {std::pair{"1", "reg.test"}, {"1", "reg.other"}, {"2", "reg.test"}}) {
    EXPECT_TRUE(r.deregisterCreator("RegistryFake", v, ns).isOk());
  }
  EXPECT_EQ(r.getCreator("RegistryFake", "1", "reg.test"), nullptr);
  EXPECT_EQ(r.deregisterCreator("RegistryFake", "1", "reg.test").code(), StatusCode::kNotFound);
}

TEST(Registry, LoadingSomethingThatIsNotALibraryFails) {
  Status s = PluginRegistry::global().loadLibrary("/nonexistent/libnothing.so");
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("libnothing.so"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kiln
