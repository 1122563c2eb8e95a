// The `kiln` subcommands. Each returns 0 on success, 1 with a message on stderr on any error.
#pragma once

#include "kiln/status.h"

namespace kiln::cli {

int runCommand(int argc, char** argv);          // kiln run PLAN ... | kiln run --onnx MODEL ...
int benchCommand(int argc, char** argv);        // kiln bench PLAN ... | kiln bench --onnx MODEL
int buildCommand(int argc, char** argv);        // kiln build --onnx MODEL --save PLAN
int inspectCommand(int argc, char** argv);      // kiln inspect PLAN
int traceCommand(int argc, char** argv);        // kiln trace FILE
int demoCommand(int argc, char** argv);         // kiln demo --out DIR
int checkPluginCommand(int argc, char** argv);  // kiln check-plugin --plugin NAME ...

// Prints "kiln: <message>" to stderr and returns 1.
int fail(const char* context, const Status& status);

}  // namespace kiln::cli
