// A deployment ships libkiln_runtime (and its plugin libraries) without the builder or the
// parser. This program links only those and loads and runs a plan that the full kiln wrote
// (make_demo_plan.cpp), on several contexts at once, and must reproduce the full kiln's outputs
// bit for bit (same CPU kernels).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "kiln/plugins.h"
#include "kiln/registry.h"
#include "kiln/runtime.h"

namespace kiln::testing {
namespace {

std::vector<uint8_t> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

const std::string kDir = KILN_RUNTIME_ONLY_DIR;

TEST(RuntimeOnly, TheBuilderLibraryIsNotInThisProcess) {
  // Linked against libkiln_runtime alone: libkiln (network API, builder) is never loaded.
  EXPECT_EQ(dlopen("libkiln.so.0", RTLD_LAZY | RTLD_NOLOAD), nullptr);
  EXPECT_NE(dlopen("libkiln_runtime.so.0", RTLD_LAZY | RTLD_NOLOAD), nullptr);
}

TEST(RuntimeOnly, LoadsAndRunsAPlanBuiltElsewhereOnSeveralContexts) {
  ASSERT_TRUE(PluginRegistry::global()
                  .registerLibrary(*getBuiltinPluginLibrary(), getBuiltinPluginLibraryPath())
                  .isOk());
  const std::vector<uint8_t> plan = readFile(kDir + "/demo.plan");
  std::unique_ptr<IEngine> engine;
  Status s = createRuntime()->deserializeEngine(plan.data(), plan.size(), engine);
  ASSERT_TRUE(s.isOk()) << s.toString();

  constexpr int kContexts = 3;
  struct Run {
    std::unique_ptr<IExecutionContext> context;
    std::vector<std::vector<uint8_t>> inputs, outputs;
    std::vector<std::string> outputNames;
    Status status;
  };
  std::vector<Run> runs(kContexts);
  for (Run& run : runs) {
    ASSERT_TRUE(engine->createExecutionContext(run.context).isOk());
    for (int32_t i = 0; i < engine->getNbIOTensors(); ++i) {
      const char* name = engine->getIOTensorName(i);
      const PluginTensorDesc d = engine->getTensorDesc(name);
      const size_t bytes = static_cast<size_t>(volume(d.dims)) * dataTypeSize(d.type);
      std::vector<uint8_t>* buffer = nullptr;
      if (engine->getTensorIOMode(name) == TensorIOMode::kINPUT) {
        run.inputs.push_back(readFile(kDir + "/" + name + ".bin"));
        ASSERT_EQ(run.inputs.back().size(), bytes) << name;
        buffer = &run.inputs.back();
      } else {
        run.outputs.emplace_back(bytes, uint8_t{0xFF});
        run.outputNames.push_back(name);
        buffer = &run.outputs.back();
      }
      ASSERT_TRUE(run.context->setTensorAddress(name, buffer->data()).isOk());
    }
  }
  std::vector<std::thread> threads;
  for (Run& run : runs)
    threads.emplace_back([&run] {
      for (int k = 0; k < 5 && run.status.isOk(); ++k) run.status = run.context->enqueue(nullptr);
    });
  for (std::thread& t : threads) t.join();
  for (Run& run : runs) {
    ASSERT_TRUE(run.status.isOk()) << run.status.toString();
    ASSERT_FALSE(run.outputs.empty());
    for (size_t o = 0; o < run.outputs.size(); ++o)
      EXPECT_EQ(run.outputs[o], readFile(kDir + "/" + run.outputNames[o] + ".bin"))
          << "output " << run.outputNames[o] << " differs from what the full kiln computed";
  }
}

}  // namespace
}  // namespace kiln::testing
