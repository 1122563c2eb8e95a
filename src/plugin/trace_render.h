// Renders a lifecycle trace as indented text for `kiln trace FILE`: a "[phase]" header whenever
// the phase changes, then one line per call, e.g.
//   [build]
//     crop0  CropAndResizePlugin#3::clone() --> 5
//     crop0  CropAndResizePlugin#5::initialize()  FAILED status=2
//   [deserialize]
//     crop0  CropAndResizeCreator::deserializePlugin() --> 7
// A non-empty namespace prefixes the class ("ns::CropAndResizePlugin#3"); a call from another
// thread than the trace's first line ends with "(thread N)".
#pragma once

#include <string>
#include <vector>

#include "kiln/status.h"
#include "plugin/trace_checker.h"

namespace kiln {

std::string renderTraceRecords(const std::vector<TraceRecord>& records);

// Parses and renders; on a malformed line `status` says which and the result is "".
std::string renderTrace(const std::vector<std::string>& lines, Status& status);

}  // namespace kiln
