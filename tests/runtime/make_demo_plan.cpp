// Writes, into DIR, the demo detector's plan built for the CPU (demo.plan), the demo inputs and
// the outputs this full kiln (builder and runtime) computes for them: one raw file per tensor,
// <name>.bin. The runtime-only test then loads and runs the plan without the builder.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "../tools/demo_network.h"
#include "kiln/kiln.h"
#include "kiln/plugins.h"

namespace {

bool writeFile(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(out);
}

int fail(const kiln::Status& s) {
  std::fprintf(stderr, "make_demo_plan: %s\n", s.toString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kiln;
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_demo_plan DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  Status s = PluginRegistry::global().registerLibrary(*getBuiltinPluginLibrary(),
                                                      getBuiltinPluginLibraryPath());
  if (!s) return fail(s);
  auto net = demo::buildDemoNetwork(s);
  if (!net) return fail(s);
  std::vector<uint8_t> plan;
  BuilderConfig config;
  config.timingRuns = 2;
  if (!(s = createBuilder()->buildSerializedNetwork(*net, config, plan))) return fail(s);
  if (!writeFile(dir + "/demo.plan", plan.data(), plan.size())) return fail(ioError("demo.plan"));

  std::unique_ptr<IEngine> engine;
  if (!(s = createRuntime()->deserializeEngine(plan.data(), plan.size(), engine))) return fail(s);
  std::unique_ptr<IExecutionContext> context;
  if (!(s = engine->createExecutionContext(context))) return fail(s);
  demo::DemoInputs in = demo::makeDemoInputs();
  std::vector<std::vector<uint8_t>> outputs;
  for (int32_t i = 0; i < engine->getNbIOTensors(); ++i) {
    const char* name = engine->getIOTensorName(i);
    const PluginTensorDesc d = engine->getTensorDesc(name);
    const size_t bytes = static_cast<size_t>(volume(d.dims)) * dataTypeSize(d.type);
    void* address = nullptr;
    if (engine->getTensorIOMode(name) == TensorIOMode::kINPUT) {
      const std::string n = name;
      address = n == "image"   ? static_cast<void*>(in.image.data())
                : n == "boxes" ? static_cast<void*>(in.boxes.data())
                               : static_cast<void*>(in.boxIndices.data());
    } else {
      outputs.emplace_back(bytes);
      address = outputs.back().data();
    }
    if (!(s = context->setTensorAddress(name, address))) return fail(s);
    if (engine->getTensorIOMode(name) == TensorIOMode::kINPUT &&
        !writeFile(dir + "/" + name + ".bin", address, bytes))
      return fail(ioError(name));
  }
  if (!(s = context->enqueue(nullptr))) return fail(s);
  size_t o = 0;
  for (int32_t i = 0; i < engine->getNbIOTensors(); ++i) {
    const char* name = engine->getIOTensorName(i);
    if (engine->getTensorIOMode(name) != TensorIOMode::kOUTPUT) continue;
    if (!writeFile(dir + "/" + name + ".bin", outputs[o].data(), outputs[o].size()))
      return fail(ioError(name));
    ++o;
  }
  return 0;
}
