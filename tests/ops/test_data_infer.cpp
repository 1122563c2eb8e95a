// Shape inference of the data-movement layers: exact output shapes and types on hand-picked
// cases, and a clear error for every invalid configuration; tactics refuse what inference refuses.
#include "ops/data_test_util.h"
#include "ops/op.h"
#include "ops/op_table.h"

namespace kiln::test {
namespace {

template <class P, class F>
Status infer(F f, const P& p, std::vector<TensorShape> in, TensorShape* out = nullptr) {
  std::vector<TensorShape> o;
  Status st = f(p, in, o);
  if (st.isOk() && out) {
    EXPECT_EQ(o.size(), 1u);
    if (!o.empty()) *out = o[0];
  }
  return st;
}

// Expects an error whose message contains `part`.
#define EXPECT_ERROR(expr, part)                                             \
  do {                                                                       \
    const Status st_ = (expr);                                               \
    EXPECT_FALSE(st_.isOk()) << #expr;                                       \
    EXPECT_NE(st_.message().find(part), std::string::npos) << st_.message(); \
  } while (0)

TensorShape shape(std::initializer_list<int64_t> d, DataType t = DataType::kFLOAT) {
  return {makeDims(d), t};
}

TEST(DataInfer, Gather) {
  TensorShape o;
  ASSERT_TRUE(infer(&ops::Gather::infer, GatherParams{1},
                    {shape({2, 3, 4}, DataType::kINT8), shape({5, 6}, DataType::kINT64)}, &o)
                  .isOk());
  EXPECT_EQ(o.dims, makeDims({2, 5, 6, 4}));
  EXPECT_EQ(o.type, DataType::kINT8);
  ASSERT_TRUE(infer(&ops::Gather::infer, GatherParams{-1},
                    {shape({2, 3}), TensorShape{Dims{}, DataType::kINT32}}, &o)
                  .isOk());
  EXPECT_EQ(o.dims, makeDims({2}));
  EXPECT_ERROR(infer(&ops::Gather::infer, GatherParams{0}, {shape({2}), shape({2})}),
               "int32 or int64");
  EXPECT_ERROR(
      infer(&ops::Gather::infer, GatherParams{2}, {shape({2, 3}), shape({2}, DataType::kINT32)}),
      "axis 2");
  EXPECT_ERROR(
      infer(&ops::Gather::infer, GatherParams{-3}, {shape({2, 3}), shape({2}, DataType::kINT32)}),
      "axis -3");
  EXPECT_ERROR(infer(&ops::Gather::infer, GatherParams{0},
                     {TensorShape{Dims{}, DataType::kFLOAT}, shape({2}, DataType::kINT32)}),
               "rank >= 1");
  EXPECT_ERROR(infer(&ops::Gather::infer, GatherParams{0},
                     {shape({2, 2, 2, 2, 2}), shape({1, 1, 1, 1, 1}, DataType::kINT32)}),
               "above 8");
  EXPECT_ERROR(
      infer(&ops::Gather::infer, GatherParams{0}, {shape({0, 2}), shape({1}, DataType::kINT32)}),
      "empty");
  EXPECT_ERROR(infer(&ops::Gather::infer, GatherParams{0}, {shape({2})}), "2 input");
}

SliceParams slice(std::initializer_list<int64_t> starts, std::initializer_list<int64_t> steps,
                  std::initializer_list<int64_t> outDims) {
  return {makeDims(starts), makeDims(steps), makeDims(outDims)};
}

TEST(DataInfer, Slice) {
  TensorShape o;
  ASSERT_TRUE(infer(&ops::Slice::infer, slice({1, 4}, {2, -2}, {2, 3}),
                    {shape({5, 5}, DataType::kBOOL)}, &o)
                  .isOk());
  EXPECT_EQ(o.dims, makeDims({2, 3}));
  EXPECT_EQ(o.type, DataType::kBOOL);
  // An empty output axis reads nothing, so its start is not checked.
  EXPECT_TRUE(infer(&ops::Slice::infer, slice({9}, {1}, {0}), {shape({5})}).isOk());
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({0}, {0}, {1}), {shape({5})}), "step is 0");
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({5}, {1}, {1}), {shape({5})}), "outside [0, 5)");
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({-1}, {1}, {1}), {shape({5})}), "outside");
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({1}, {2}, {3}), {shape({5})}),
               "outside");  // reads 5
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({3}, {-2}, {3}), {shape({5})}),
               "outside");  // reads -1
  EXPECT_TRUE(infer(&ops::Slice::infer, slice({4}, {-2}, {3}), {shape({5})}).isOk());
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({0}, {int64_t{1} << 62}, {2}), {shape({5})}),
               "outside");
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({4}, {INT64_MIN}, {2}), {shape({5})}), "outside");
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({0}, {1}, {-1}), {shape({5})}), "negative");
  EXPECT_ERROR(infer(&ops::Slice::infer, slice({0}, {1}, {1}), {shape({5, 5})}), "rank");
}

TEST(DataInfer, Padding) {
  TensorShape o;
  PaddingParams p;
  p.before[0] = 1;
  p.after[1] = 3;
  ASSERT_TRUE(infer(&ops::Padding::infer, p, {shape({2, 3}, DataType::kINT64)}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({3, 6}));
  EXPECT_EQ(o.type, DataType::kINT64);
  p.mode = PaddingMode::kREFLECT;
  EXPECT_ERROR(infer(&ops::Padding::infer, p, {shape({2, 3})}), "below the dim 3");
  EXPECT_TRUE(infer(&ops::Padding::infer, p, {shape({2, 4})}).isOk());
  p.mode = PaddingMode::kEDGE;
  EXPECT_ERROR(infer(&ops::Padding::infer, p, {shape({0, 4})}), "empty axis");
  p.mode = static_cast<PaddingMode>(7);
  EXPECT_ERROR(infer(&ops::Padding::infer, p, {shape({2, 4})}), "unknown mode");
  p.mode = PaddingMode::kCONSTANT;
  p.before[1] = -1;
  EXPECT_ERROR(infer(&ops::Padding::infer, p, {shape({2, 4})}), "must be in [0");
  p.before[1] = int64_t{1} << 61;
  EXPECT_ERROR(infer(&ops::Padding::infer, p, {shape({2, 4})}), "must be in [0");
}

TEST(DataInfer, TileAndExpand) {
  TensorShape o;
  ASSERT_TRUE(infer(&ops::Tile::infer, TileParams{makeDims({2, 0, 3})},
                    {shape({2, 3, 4}, DataType::kHALF)}, &o)
                  .isOk());
  EXPECT_EQ(o.dims, makeDims({4, 0, 12}));
  EXPECT_EQ(o.type, DataType::kHALF);
  EXPECT_ERROR(infer(&ops::Tile::infer, TileParams{makeDims({2, -1})}, {shape({2, 3})}),
               "negative");
  EXPECT_ERROR(infer(&ops::Tile::infer, TileParams{makeDims({2})}, {shape({2, 3})}), "rank");
  EXPECT_ERROR(
      infer(&ops::Tile::infer, TileParams{makeDims({int64_t{1} << 59, 1})}, {shape({4, 3})}),
      "too large");

  ASSERT_TRUE(
      infer(&ops::Expand::infer, ExpandParams{makeDims({2, 1, 4})}, {shape({3, 1})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({2, 3, 4}));
  ASSERT_TRUE(infer(&ops::Expand::infer, ExpandParams{makeDims({3})}, {shape({2, 1})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({2, 3}));  // a shape of lower rank than the input
  ASSERT_TRUE(
      infer(&ops::Expand::infer, ExpandParams{makeDims({0, 1})}, {shape({1, 5})}, &o).isOk());
  EXPECT_EQ(o.dims, makeDims({0, 5}));
  EXPECT_ERROR(infer(&ops::Expand::infer, ExpandParams{makeDims({2, 4})}, {shape({3})}),
               "does not broadcast");
  EXPECT_ERROR(infer(&ops::Expand::infer, ExpandParams{makeDims({-1})}, {shape({1})}), "negative");
}

TEST(DataInfer, TacticsRefuseInconsistentOutputs) {
  const auto in = desc(makeDims({2, 3}), DataType::kINT32);
  // Output dims that do not match what inference gives.
  const auto wrong = desc(makeDims({2, 4}), DataType::kINT32);
  declines(ops::Slice::cpuTactics().back(),
           config(LayerType::kSLICE, slice({0, 0}, {1, 1}, {2, 3}), {in}, {wrong}));
  declines(ops::Tile::cpuTactics().back(),
           config(LayerType::kTILE, TileParams{makeDims({1, 1})}, {in}, {wrong}));
  declines(ops::Expand::cpuTactics().back(),
           config(LayerType::kEXPAND, ExpandParams{makeDims({2, 3})}, {in}, {wrong}));
  declines(ops::Padding::cpuTactics().back(),
           config(LayerType::kPADDING, PaddingParams{}, {in}, {wrong}));
  declines(ops::Gather::cpuTactics().back(),
           config(LayerType::kGATHER, GatherParams{0}, {in, desc(makeDims({2}), DataType::kFLOAT)},
                  {wrong}));
  // Another layer's params.
  declines(ops::Slice::cpuTactics().back(), config(LayerType::kSLICE, TileParams{}, {in}, {in}));
  // Channels-last is not supported by these layers.
  const auto nhwc = desc(makeDims({1, 2, 2, 2}), DataType::kFLOAT, TensorFormat::kCHANNELS_LAST);
  declines(ops::Tile::cpuTactics().back(),
           config(LayerType::kTILE, TileParams{makeDims({1, 1, 1, 1})}, {nhwc}, {nhwc}));
}

}  // namespace
}  // namespace kiln::test
