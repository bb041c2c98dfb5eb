#include "cli/job_spec_file.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "libs/config/config_loader.h"
#include "libs/core/file.h"

namespace accelopt::cli {
namespace {

namespace fs = std::filesystem;

absl::Status Invalid(const std::string& field, const std::string& problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

absl::StatusOr<std::string> ReadField(const std::string& path, const std::string& field) {
  auto text = core::ReadFile(path);
  if (!text.ok()) return Invalid(field, absl::StrCat("cannot read '", path, "': ", text.status().message()));
  return *text;
}

// Fills name, parameters, tolerance and roofline from the metadata YAML.
absl::Status ParseMetadata(const std::string& text, const std::string& field, v1::Problem* problem) {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return Invalid(field, "the metadata file is not a YAML mapping");
    if (root["name"]) problem->set_name(root["name"].as<std::string>());
    if (root["tolerance"]) problem->set_tolerance(root["tolerance"].as<double>());
    if (const YAML::Node params = root["parameters"]; params && params.IsMap()) {
      for (const auto& kv : params) {
        (*problem->mutable_parameters())[kv.first.as<std::string>()] = kv.second.as<std::string>();
      }
    }
    if (const YAML::Node rl = root["roofline"]; rl && rl.IsMap()) {
      v1::Roofline* roofline = problem->mutable_roofline();
      if (rl["vector_flops"]) roofline->set_vector_flops(rl["vector_flops"].as<double>());
      if (rl["matmul_flops"]) roofline->set_matmul_flops(rl["matmul_flops"].as<double>());
      if (rl["hbm_bytes"]) roofline->set_hbm_bytes(rl["hbm_bytes"].as<double>());
    }
  } catch (const YAML::Exception& e) {
    return Invalid(field, absl::StrCat("bad metadata YAML: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::Problem> LoadProblemFiles(const std::string& reference_path, const std::string& metadata_path,
                                             const std::string& field_prefix) {
  v1::Problem problem;
  auto source = ReadField(reference_path, absl::StrCat(field_prefix, ".reference"));
  if (!source.ok()) return source.status();
  problem.set_reference_source(*source);
  problem.set_reference_filename(fs::path(reference_path).filename().string());
  problem.set_name(fs::path(reference_path).stem().string());
  const std::string metadata_field = absl::StrCat(field_prefix, ".metadata");
  std::string meta_path = metadata_path;
  if (meta_path.empty()) {
    meta_path = (fs::path(reference_path).parent_path() / "problem.yaml").string();
    if (!fs::exists(meta_path)) return problem;
  }
  auto meta = ReadField(meta_path, metadata_field);
  if (!meta.ok()) return meta.status();
  problem.set_metadata_yaml(*meta);
  if (absl::Status s = ParseMetadata(*meta, metadata_field, &problem); !s.ok()) return s;
  return problem;
}

absl::StatusOr<v1::JobSpec> LoadJobSpecFile(const std::string& path) {
  auto text = core::ReadFile(path);
  if (!text.ok()) return absl::NotFoundError(absl::StrCat("job spec ", path, " not found"));
  v1::JobFile file;
  if (absl::Status s = config::ParseConfigText(*text, path, &file); !s.ok()) return s;
  const fs::path base = fs::path(path).parent_path();
  auto resolve = [&base](const std::string& p) {
    return fs::path(p).is_absolute() ? p : (base / p).lexically_normal().string();
  };
  if (file.problem().reference().empty()) return Invalid("problem.reference", "required");
  if (file.problem().kernel().empty()) return Invalid("problem.kernel", "required");

  v1::JobSpec spec;
  spec.set_name(file.name());
  spec.set_preset(file.preset());
  auto problem =
      LoadProblemFiles(resolve(file.problem().reference()),
                       file.problem().metadata().empty() ? "" : resolve(file.problem().metadata()), "problem");
  if (!problem.ok()) return problem.status();
  *spec.mutable_problem() = *std::move(problem);
  auto kernel = ReadField(resolve(file.problem().kernel()), "problem.kernel");
  if (!kernel.ok()) return kernel.status();
  spec.mutable_baseline()->set_source(*kernel);
  spec.set_device(file.device());
  spec.set_seed(file.seed());
  *spec.mutable_search() = file.search();
  *spec.mutable_models() = file.models();
  *spec.mutable_profile() = file.profile();
  *spec.mutable_budget() = file.budget();
  *spec.mutable_stop() = file.stop();
  if (spec.name().empty()) spec.set_name(fs::path(path).stem().string());
  return spec;
}

}  // namespace accelopt::cli
