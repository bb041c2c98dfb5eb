#include "cli/args.h"

#include "absl/strings/str_cat.h"
#include "cli/suggest.h"

namespace accelopt::cli {

std::string Args::Get(const std::string& name, const std::string& fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : it->second;
}

absl::StatusOr<Args> ParseArgs(const std::vector<std::string>& argv, const std::set<std::string>& with_value,
                               const std::set<std::string>& booleans) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      args.positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::string value;
    bool has_inline = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline = true;
    }
    if (with_value.count(name)) {
      if (!has_inline) {
        if (i + 1 >= argv.size()) {
          return absl::InvalidArgumentError(absl::StrCat("option --", name, " needs a value"));
        }
        value = argv[++i];
      }
      args.values[name] = value;
    } else if (booleans.count(name) && !has_inline) {
      args.flags.insert(name);
    } else {
      std::vector<std::string> known(with_value.begin(), with_value.end());
      known.insert(known.end(), booleans.begin(), booleans.end());
      std::optional<std::string> guess = ClosestMatch(name, known);
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown option --", name, guess.has_value() ? absl::StrCat(" (did you mean --", *guess, "?)") : ""));
    }
  }
  return args;
}

}  // namespace accelopt::cli
