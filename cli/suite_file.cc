#include "cli/suite_file.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "cli/job_spec_file.h"
#include "libs/config/config_loader.h"
#include "libs/core/file.h"

namespace accelopt::cli {
namespace {

namespace fs = std::filesystem;

absl::Status Invalid(const std::string& path, const std::string& problem) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", problem));
}

}  // namespace

absl::StatusOr<Suite> LoadSuiteFile(const std::string& path) {
  auto text = core::ReadFile(path);
  if (!text.ok()) return absl::NotFoundError(absl::StrCat("suite ", path, " not found"));
  Suite suite;
  suite.name = fs::path(path).stem().string();
  try {
    const YAML::Node root = YAML::Load(*text);
    if (!root.IsMap()) return Invalid(path, "not a YAML mapping");
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      if (key != "name" && key != "concurrency" && key != "overrides" && key != "problems") {
        return Invalid(path, absl::StrCat("unknown key '", key, "' (name, concurrency, overrides, problems)"));
      }
    }
    if (root["name"]) suite.name = root["name"].as<std::string>();
    if (root["concurrency"]) suite.concurrency = root["concurrency"].as<int>();
    if (suite.concurrency < 1) return Invalid(path, "concurrency must be at least 1");
    v1::JobSpec overrides;
    if (const YAML::Node o = root["overrides"]; o) {
      YAML::Emitter emitter;
      emitter << o;
      if (absl::Status s = config::ParseConfigText(emitter.c_str(), path + " overrides", &overrides); !s.ok()) {
        return s;
      }
    }
    const YAML::Node problems = root["problems"];
    if (!problems || !problems.IsSequence() || problems.size() == 0) {
      return Invalid(path, "problems: a non-empty list of job files is required");
    }
    std::set<std::string> names;
    for (size_t i = 0; i < problems.size(); ++i) {
      const YAML::Node entry = problems[i];
      std::string job = entry.IsScalar() ? entry.as<std::string>() : entry["job"] ? entry["job"].as<std::string>() : "";
      if (job.empty()) return Invalid(path, absl::StrCat("problems[", i, "]: needs a job file"));
      if (!fs::path(job).is_absolute()) job = (fs::path(path).parent_path() / job).lexically_normal().string();
      std::string name = entry.IsMap() && entry["name"] ? entry["name"].as<std::string>()
                                                        : fs::path(job).parent_path().filename().string();
      if (!names.insert(name).second)
        return Invalid(path, absl::StrCat("problems[", i, "]: duplicate name '", name, "'"));
      auto spec = LoadJobSpecFile(job);
      if (!spec.ok()) return Invalid(path, absl::StrCat("problems[", i, "] (", job, "): ", spec.status().message()));
      spec->MergeFrom(overrides);
      suite.problems.push_back({name, *std::move(spec)});
    }
  } catch (const YAML::Exception& e) {
    return Invalid(path, absl::StrCat("bad YAML: ", e.what()));
  }
  return suite;
}

}  // namespace accelopt::cli
