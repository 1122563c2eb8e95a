// kiln: build, inspect, run and trace plans from the command line.
#include <cstdio>
#include <cstring>
#include <string>

#include "commands.h"

namespace {

void usage(FILE* out) {
  std::fputs(
      "usage: kiln <command> [options]\n"
      "\n"
      "commands:\n"
      "  demo --out DIR        build the bundled demo detector, write DIR/demo.plan and\n"
      "                        DIR/trace.jsonl, reload the plan, run it on two contexts and\n"
      "                        print per-box class scores and the plugin lifecycle\n"
      "  build --onnx MODEL --save PLAN\n"
      "                        parse an ONNX model, build it and write the plan\n"
      "      --shapes NAME:DIMS      build for this shape of an input with symbolic dims\n"
      "                              (e.g. x:8x3x224x224; repeatable; also for run/bench --onnx)\n"
      "      --shapes NAME:MIN,OPT,MAX   an optimization profile: one plan for that range\n"
      "                              (e.g. x:1x3x224x224,32x3x224x224,64x3x224x224); the same\n"
      "                              NAME again opens another profile; trtexec's --minShapes,\n"
      "                              --optShapes and --maxShapes (NAME:DIMS,...) also work\n"
      "      --shape-values NAME:V,V,...  build for these values of an integer input that the\n"
      "                              model reads as a shape (a Reshape's shape, ...): a\n"
      "                              shape-value input (repeatable; also for run/bench --onnx,\n"
      "                              where an --input file's values serve too)\n"
      "      --timing-cache FILE     reuse tactic timings from FILE, add new ones (also for\n"
      "                              run/bench --onnx)\n"
      "  run PLAN              run a plan (random float inputs, integer inputs 0, unless given;\n"
      "                        a dynamic plan runs at the --input files' shapes, --shapes\n"
      "                        NAME:DIMS, or else profile 0's opt; bench PLAN likewise)\n"
      "  run --onnx MODEL      build an ONNX model in memory, then run it (a model with\n"
      "                        symbolic input dims is built for the --input files' shapes)\n"
      "      --input NAME=FILE   an input, .npy or ONNX TensorProto .pb (repeatable)\n"
      "      --output-dir DIR        write one .npy per output, named after the tensor\n"
      "      --contexts N            run N contexts on N threads and check they agree\n"
      "      --runs N                inferences per context (default 1)\n"
      "      --seed N                seed for random inputs\n"
      "  bench PLAN            latency and throughput, as trtexec (bench --onnx MODEL builds "
      "first)\n"
      "      --warmup-ms MS          untimed runs first (default 200)\n"
      "      --iterations N          at least N timed inferences per stream (default 10)\n"
      "      --duration S            and at least S seconds of them (default 3)\n"
      "      --streams N             N contexts on N streams and threads at once (default 1)\n"
      "      --cuda-graph            CUDA plans: replay each context's enqueue as a CUDA graph\n"
      "      --engine-graphs         CUDA plans: each context keeps its own graphs "
      "(setCudaGraphs), plugins or not\n"
      "      --layer-by-layer        CUDA plans: no graphs (the default replays the engine's own "
      "for plugin-free plans)\n"
      "      --profile               per-layer times (--profile-runs N, default 20)\n"
      "      --json FILE             the report as JSON\n"
      "      --chrome-trace FILE     the profiled runs for chrome://tracing or Perfetto\n"
      "      --batch-items N         items per inference (default: first input's dim 0)\n"
      "      --seed N                seed for random inputs; --no-progress\n"
      "  inspect PLAN          print the plan as JSON: layers, tactics, formats, timings,\n"
      "                        memory plan, plugin records\n"
      "  trace FILE            render a lifecycle trace and check guarantees 1-9\n"
      "  check-plugin --plugin NAME --input SHAPE ...  check one plugin's contract (--help)\n"
      "\n"
      "common options: --plugins LIB (load a plugin library; repeatable), --trace PATH\n"
      "(lifecycle trace, '-' for stderr; also KILN_TRACE), --verbose\n",
      out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 1 : 0;
  }
  const std::string command = argv[1];
  if (command == "run") return kiln::cli::runCommand(argc, argv);
  if (command == "bench") return kiln::cli::benchCommand(argc, argv);
  if (command == "build") return kiln::cli::buildCommand(argc, argv);
  if (command == "inspect") return kiln::cli::inspectCommand(argc, argv);
  if (command == "trace") return kiln::cli::traceCommand(argc, argv);
  if (command == "demo") return kiln::cli::demoCommand(argc, argv);
  if (command == "check-plugin") return kiln::cli::checkPluginCommand(argc, argv);
  std::fprintf(stderr, "kiln: unknown command '%s'\n\n", command.c_str());
  usage(stderr);
  return 1;
}
