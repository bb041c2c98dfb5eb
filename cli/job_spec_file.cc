#include "cli/job_spec_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/config/arithmetic.h"
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

// Reads a file named by the job spec: size limit first, then UTF-8. Errors never quote the contents.
absl::StatusOr<std::string> ReadField(const std::string& path, const std::string& field) {
  std::error_code ec;
  if (const fs::file_status status = fs::status(path, ec); !ec && !fs::is_regular_file(status)) {
    // a directory reads as empty, and a FIFO or a device would block or never end
    return Invalid(field, absl::StrCat("'", path, "' is ",
                                       fs::is_directory(status) ? "a directory, not a file" : "not a regular file"));
  }
  const auto size = fs::file_size(path, ec);
  if (!ec && static_cast<int64_t>(size) > kMaxSpecFileBytes) {
    return Invalid(field, absl::StrCat("'", path, "' is ", size,
                                       " bytes, over the request limit server.max_request_bytes (", kMaxSpecFileBytes,
                                       " bytes by default); the orchestrator also limits kernels "
                                       "by max_kernel_bytes and problems by max_problem_bytes"));
  }
  auto text = core::ReadFile(path);
  if (!text.ok()) return Invalid(field, absl::StrCat("cannot read '", path, "': ", text.status().message()));
  if (int64_t bad = FirstInvalidUtf8(*text); bad >= 0) {
    return Invalid(field, absl::StrCat("'", path, "' is not UTF-8 text (invalid byte 0x",
                                       absl::Hex(static_cast<unsigned char>((*text)[bad]), absl::kZeroPad2),
                                       " at offset ", bad, ")"));
  }
  return *text;
}

// INVALID_ARGUMENT unless `path` (symlinks resolved) lies under `base` or one of `allowed`.
absl::Status CheckConfined(const std::string& path, const fs::path& base, const std::vector<std::string>& allowed,
                           const std::string& field) {
  auto inside = [](const fs::path& file, const fs::path& dir) {
    std::error_code ec;
    const fs::path real_dir = fs::weakly_canonical(fs::absolute(dir), ec);
    if (ec) return false;
    const fs::path real_file = fs::weakly_canonical(fs::absolute(file), ec);
    if (ec) return false;
    auto mismatch = std::mismatch(real_dir.begin(), real_dir.end(), real_file.begin(), real_file.end());
    return mismatch.first == real_dir.end();
  };
  if (inside(path, base)) return absl::OkStatus();
  for (const std::string& dir : allowed) {
    if (inside(path, dir)) return absl::OkStatus();
  }
  return Invalid(field, absl::StrCat("'", path, "' is outside the job file's directory '", base.string(),
                                     "' (pass --allow-path DIR to allow another directory)"));
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
      std::map<std::string, double> numbers;  // the numeric parameters, for terms such as "3*M*N"
      for (const auto& [name, value] : problem->parameters()) {
        if (double d; absl::SimpleAtod(value, &d)) numbers[name] = d;
      }
      v1::Roofline* roofline = problem->mutable_roofline();
      const std::pair<const char*, void (v1::Roofline::*)(double)> terms[] = {
          {"vector_flops", &v1::Roofline::set_vector_flops},
          {"matmul_flops", &v1::Roofline::set_matmul_flops},
          {"hbm_bytes", &v1::Roofline::set_hbm_bytes}};
      for (const auto& [key, setter] : terms) {
        if (!rl[key]) continue;
        if (!rl[key].IsScalar()) return Invalid(field, absl::StrCat("roofline ", key, ": not a number or expression"));
        auto value = config::EvaluateArithmetic(rl[key].Scalar(), numbers);
        if (!value.ok()) return Invalid(field, absl::StrCat("roofline ", key, ": ", value.status().message()));
        (roofline->*setter)(*value);
      }
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

int64_t FirstInvalidUtf8(const std::string& text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    size_t len = 0;
    uint32_t min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, min = 0x10000;
    } else {
      return static_cast<int64_t>(i);
    }
    if (i + len > n) return static_cast<int64_t>(i);
    uint32_t code = c & (0xFF >> (len + 1));
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return static_cast<int64_t>(i + k);
      code = (code << 6) | (s[i + k] & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return static_cast<int64_t>(i);
    i += len;
  }
  return -1;
}

absl::StatusOr<v1::JobSpec> LoadJobSpecFile(const std::string& path, const std::vector<std::string>& allowed_dirs) {
  std::error_code ec;
  if (const fs::file_status status = fs::status(path, ec); !ec && !fs::is_regular_file(status)) {
    return absl::InvalidArgumentError(absl::StrCat("job spec ", path, " is not a regular file"));
  }
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
  for (const auto& [field, file] :
       {std::pair{kReferenceKey, reference}, {kKernelKey, kernel}, {kMetadataKey, metadata}}) {
    if (file.empty()) continue;
    if (absl::Status s = CheckConfined(file, base.empty() ? fs::path(".") : base, allowed_dirs, field); !s.ok()) {
      return s;
    }
  }

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
