// CropAndResize's fields: what createPlugin() accepts, and the errors that name the bad field.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>

#include "crop_and_resize_test_util.h"

namespace kiln::testing {
namespace {

// createPlugin must fail, and the creator's message must contain every one of `words`.
void expectRejected(Fields& fields, std::initializer_list<const char*> words) {
  PluginPtr p = create(fields, "layerX");
  ASSERT_FALSE(p);
  const std::string error = lastError(creator());
  for (const char* w : words) EXPECT_NE(error.find(w), std::string::npos) << error;
  EXPECT_NE(error.find("layerX"), std::string::npos) << error;
}

TEST(CropAndResizeFields, LibraryExportsTheCreator) {
  const PluginLibraryInfo* lib = getBuiltinPluginLibrary();
  ASSERT_TRUE(lib);
  EXPECT_EQ(lib->abiVersion, kPluginAbiVersion);
  ASSERT_TRUE(creator());
  EXPECT_STREQ(creator()->getPluginName(), "CropAndResize");
  EXPECT_STREQ(creator()->getPluginVersion(), "1");
  EXPECT_NE(std::string(getBuiltinPluginLibraryPath()).find("kiln_plugins"), std::string::npos);
}

TEST(CropAndResizeFields, FieldNamesListTypes) {
  const PluginFieldCollection* names = creator()->getFieldNames();
  ASSERT_TRUE(names);
  ASSERT_EQ(names->nbFields, 4);
  const struct {
    const char* name;
    PluginFieldType type;
  } expected[] = {{"crop_height", PluginFieldType::kINT32},
                  {"crop_width", PluginFieldType::kINT32},
                  {"method", PluginFieldType::kSTRING},
                  {"extrapolation_value", PluginFieldType::kFLOAT32}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_STREQ(names->fields[i].name, expected[i].name);
    EXPECT_EQ(names->fields[i].type, expected[i].type);
    EXPECT_EQ(names->fields[i].data, nullptr);
  }
}

TEST(CropAndResizeFields, DefaultsAndAlternativeTypes) {
  Fields f;
  f.i64("crop_height", 7).i32("crop_width", 2);  // int64 that fits: accepted
  PluginPtr p = create(f);
  ASSERT_TRUE(p) << lastError(creator());
  EXPECT_STREQ(p->getPluginName(), "CropAndResize");
  EXPECT_STREQ(p->getPluginVersion(), "1");
  EXPECT_STREQ(p->getPluginNamespace(), "");
  EXPECT_EQ(p->getNbOutputs(), 1);

  Fields g;
  g.i32("crop_height", 1).i32("crop_width", 1).f64("extrapolation_value", 0.25);
  g.raw("method", PluginFieldType::kSTRING, "nearest\0", 8, 8);  // a trailing NUL is tolerated
  EXPECT_TRUE(create(g)) << lastError(creator());
}

TEST(CropAndResizeFields, MissingCropSize) {
  Fields f;
  f.i32("crop_width", 3);
  expectRejected(f, {"crop_height", "missing"});
  Fields g;
  g.i32("crop_height", 3);
  expectRejected(g, {"crop_width", "missing"});
  ASSERT_FALSE(creator()->createPlugin("layerX", nullptr));
  EXPECT_NE(lastError(creator()).find("crop_height"), std::string::npos);
}

TEST(CropAndResizeFields, CropSizeOutOfRange) {
  Fields big;
  big.i64("crop_height", 2).i64("crop_width", int64_t{1} << 32);
  expectRejected(big, {"crop_width", "4294967296", "int32"});
  Fields negative;
  negative.i64("crop_height", -5).i32("crop_width", 2);
  expectRejected(negative, {"crop_height", "-5"});
  Fields zero;
  zero.i32("crop_height", 0).i32("crop_width", 2);
  expectRejected(zero, {"crop_height", "at least 1"});
  Fields max;
  max.i64("crop_height", std::numeric_limits<int32_t>::max()).i32("crop_width", 1);
  EXPECT_TRUE(create(max)) << lastError(creator());
}

TEST(CropAndResizeFields, WrongTypes) {
  Fields f;
  f.f32("crop_height", 3.0f).i32("crop_width", 2);
  expectRejected(f, {"crop_height", "float32"});
  Fields g;
  g.i32("crop_height", 3).i32("crop_width", 2).i32("method", 1);
  expectRejected(g, {"method", "int32"});
  Fields h;
  h.i32("crop_height", 3).i32("crop_width", 2).i32("extrapolation_value", 1);
  expectRejected(h, {"extrapolation_value", "int32"});
  const int16_t small = 3;
  Fields i;
  i.raw("crop_height", PluginFieldType::kINT16, &small, 2, 1).i32("crop_width", 2);
  expectRejected(i, {"crop_height", "int16"});
}

TEST(CropAndResizeFields, WrongLengths) {
  const int32_t two[] = {3, 4};
  Fields f;
  f.raw("crop_height", PluginFieldType::kINT32, two, sizeof two, 2).i32("crop_width", 2);
  expectRejected(f, {"crop_height", "1 value"});
}

TEST(CropAndResizeFields, UnknownMethod) {
  Fields f = cropFields(2, 2, "cubic");
  expectRejected(f, {"method", "cubic"});
  Fields g = cropFields(2, 2, "");
  expectRejected(g, {"method"});
}

TEST(CropAndResizeFields, UnknownAndDuplicateFields) {
  Fields f = cropFields(2, 2);
  f.i32("crop_depth", 2);
  expectRejected(f, {"crop_depth", "unknown"});
  Fields g = cropFields(2, 2);
  g.i32("crop_width", 3);
  expectRejected(g, {"crop_width", "twice"});
}

TEST(CropAndResizeFields, ExtrapolationOutOfFloatRange) {
  Fields f = Fields();
  f.i32("crop_height", 2).i32("crop_width", 2).f64("extrapolation_value", 1e300);
  expectRejected(f, {"extrapolation_value", "float32"});
}

}  // namespace
}  // namespace kiln::testing
