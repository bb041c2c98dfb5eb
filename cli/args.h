// Parses a subcommand's arguments: `--name value`, `--name=value`, boolean `--flag`, and positionals.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace accelopt::cli {

struct Args {
  std::map<std::string, std::string> values;  // options that take a value
  std::set<std::string> flags;                // boolean options given
  std::vector<std::string> positional;

  std::string Get(const std::string& name, const std::string& fallback = "") const;
  bool Has(const std::string& name) const { return flags.count(name) > 0; }
};

// `with_value` lists options that take a value; `booleans` lists flags. INVALID_ARGUMENT names an unknown
// option (with the nearest known one when it looks like a typo) or a missing value.
absl::StatusOr<Args> ParseArgs(const std::vector<std::string>& argv, const std::set<std::string>& with_value,
                               const std::set<std::string>& booleans);

}  // namespace accelopt::cli
