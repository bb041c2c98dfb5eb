// The job spec file read by `accelopt submit JOB.yaml`: YAML (or JSON) with the fields of accelopt.v1.JobSpec,
// except that the problem and the baseline kernel are usually given as files, relative to the job file:
//   problem: {reference: reference.py, kernel: kernel.py, metadata: problem.yaml}
// Loading reads those files into spec.problem and spec.baseline. Every other key is a JobSpec field, so a
// new JobSpec field can be written in a job file without any change here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "accelopt/v1/job.pb.h"

namespace accelopt::cli {

// INVALID_ARGUMENT naming the field and the problem: an unknown key (with its line), a bad value, a
// missing required path ("problem.kernel: required"), a file that cannot be read ("problem.reference:
// cannot read '...': ..."), or a metadata file that is not a YAML mapping. NOT_FOUND when `path` itself
// does not exist. problem.reference may be replaced by an inline problem.reference_source and
// problem.kernel by baseline.source; other problem fields written in the job file (name, tolerance, ...)
// override those of the metadata file.
//
// Input hygiene: every path must resolve (symlinks followed) under the job file's directory or one of
// `allowed_dirs` (`--allow-path`), else INVALID_ARGUMENT naming the field and the directory; a file larger
// than kMaxSpecFileBytes is refused by its documented limit name; a file that is not UTF-8 text is refused
// with the offset of the first bad byte. Errors name paths and fields, never quote file contents.
absl::StatusOr<v1::JobSpec> LoadJobSpecFile(const std::string& path, const std::vector<std::string>& allowed_dirs = {});

// The largest file a job spec may name: the orchestrator's default request limit, server.max_request_bytes
// (16 MiB). The kernel is limited further by the orchestrator's max_kernel_bytes (default 256 KiB) and the
// problem by max_problem_bytes (default 1 MiB).
inline constexpr int64_t kMaxSpecFileBytes = 16 << 20;

// The offset of the first byte that is not part of valid UTF-8, or -1 when `text` is valid UTF-8.
int64_t FirstInvalidUtf8(const std::string& text);

// The Problem for a reference module and its metadata (problem.yaml: name, parameters, tolerance,
// roofline). `metadata_path` may be empty (then problem.yaml beside the reference is used when it exists).
// Errors name `field_prefix` ("problem.reference", "problem.metadata").
absl::StatusOr<v1::Problem> LoadProblemFiles(const std::string& reference_path, const std::string& metadata_path,
                                             const std::string& field_prefix);

// Fills name, tolerance, parameters and roofline of `problem` from the text of a problem.yaml. INVALID_ARGUMENT
// naming `field` when the text is not a YAML mapping or a value has the wrong type.
absl::Status ParseProblemMetadata(const std::string& text, const std::string& field, v1::Problem* problem);

}  // namespace accelopt::cli
