#include "cli/job_spec_file.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "libs/config/config_loader.h"
#include "libs/core/file.h"

namespace accelopt::cli {
namespace {

namespace fs = std::filesystem;

// The keys of the job file that name files rather than JobSpec fields.
constexpr char kReferenceKey[] = "problem.reference";
constexpr char kKernelKey[] = "problem.kernel";
constexpr char kMetadataKey[] = "problem.metadata";

absl::Status Invalid(const std::string& field, const std::string& problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

absl::StatusOr<std::string> ReadField(const std::string& path, const std::string& field) {
  auto text = core::ReadFile(path);
  if (!text.ok()) return Invalid(field, absl::StrCat("cannot read '", path, "': ", text.status().message()));
  return *text;
}

}  // namespace

absl::Status ParseProblemMetadata(const std::string& text, const std::string& field, v1::Problem* problem) {
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
  if (absl::Status s = ParseProblemMetadata(*meta, metadata_field, &problem); !s.ok()) return s;
  return problem;
}

absl::StatusOr<v1::JobSpec> LoadJobSpecFile(const std::string& path) {
  auto text = core::ReadFile(path);
  if (!text.ok()) return absl::NotFoundError(absl::StrCat("job spec ", path, " not found"));
  v1::JobSpec spec;
  auto paths = config::ParseConfigTextWithExtraKeys(*text, path, {kReferenceKey, kKernelKey, kMetadataKey}, &spec);
  if (!paths.ok()) return paths.status();
  const fs::path base = fs::path(path).parent_path();
  auto resolved = [&](const char* key) -> std::string {
    auto it = paths->find(key);
    if (it == paths->end() || it->second.empty()) return "";
    return fs::path(it->second).is_absolute() ? it->second : (base / it->second).lexically_normal().string();
  };
  const std::string reference = resolved(kReferenceKey);
  const std::string kernel = resolved(kKernelKey);
  const std::string metadata = resolved(kMetadataKey);

  if (reference.empty() && spec.problem().reference_source().empty()) return Invalid(kReferenceKey, "required");
  if (!reference.empty() && !spec.problem().reference_source().empty()) {
    return Invalid(kReferenceKey, "give either a file or problem.reference_source, not both");
  }
  if (!metadata.empty() && reference.empty()) return Invalid(kMetadataKey, "needs problem.reference");
  if (kernel.empty() && spec.baseline().source().empty()) return Invalid(kKernelKey, "required");
  if (!kernel.empty() && !spec.baseline().source().empty()) {
    return Invalid(kKernelKey, "give either a file or baseline.source, not both");
  }
  if (!reference.empty()) {
    auto problem = LoadProblemFiles(reference, metadata, "problem");
    if (!problem.ok()) return problem.status();
    problem->MergeFrom(spec.problem());  // fields written in the job file override the metadata file
    *spec.mutable_problem() = *std::move(problem);
  }
  if (!kernel.empty()) {
    auto source = ReadField(kernel, kKernelKey);
    if (!source.ok()) return source.status();
    spec.mutable_baseline()->set_source(*source);
  }
  if (spec.name().empty()) spec.set_name(fs::path(path).stem().string());
  return spec;
}

}  // namespace accelopt::cli
