// The timing cache: measured tactic times kept in a file, keyed by device, kiln version and op
// signature (layer type, parameters, input and output types/formats/shapes), so that a rebuild
// on the same machine skips timing layers it has seen. A cache from another device or kiln
// version simply has no matching keys. Beside a configuration's fastest tactic it may hold, under
// the key workspaceFitKey makes (workspace_choice.h), the slower one the workspace trade took.
//
// Several caches may load and save one file: a build's format alternatives are lowered by build
// sessions of their own, each with its cache, and two builds may share a file. So a save merges
// with the file as it is then (what this cache recorded wins; what it only loaded fills in),
// never dropping entries that another saved since this one loaded.
#pragma once

#include <map>
#include <set>
#include <string>

#include "backends/backend.h"
#include "kiln/status.h"

namespace kiln {

class TimingCache {
 public:
  // An absent file is an empty cache; a malformed one is an error naming the line. Adds to the
  // entries held.
  Status load(const std::string& path);
  // Writes the entries merged with the file's current ones (see above); an unreadable file is
  // replaced.
  Status save(const std::string& path) const;

  // The key for one configuration on the backend's (current) device.
  static std::string key(const Backend& backend, const KernelConfig& config);

  bool find(const std::string& key, std::string& tactic, double& ms) const;
  void record(const std::string& key, const std::string& tactic, double ms);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string tactic;
    double ms;
  };
  std::map<std::string, Entry> entries_;
  std::set<std::string> recorded_;  // keys record() set, which win over the file's on save
};

}  // namespace kiln
