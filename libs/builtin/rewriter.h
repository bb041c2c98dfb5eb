// Runs the builtin optimizer's Python rewrite engine (services/executor/builtin/nki_rewrite) in the sandbox:
// `analyze` lists the transformations that apply to a kernel, `apply` rewrites it with one plan.
//
// Thread-safe; each call blocks for one sandboxed Python run (a few hundred milliseconds), so callers run it
// off gRPC threads.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"

namespace accelopt::builtin {

struct RewriterOptions {
  std::string python = "/usr/bin/python3";
  // Directory holding the nki_rewrite package (bound read-only at /rewriter).
  std::string rewriter_dir;
  // Parent of the per-run scratch directories; empty: $TMPDIR, else /tmp.
  std::string scratch_root;
  bool use_bwrap = true;
  std::string bwrap = "bwrap";
  absl::Duration timeout = absl::Seconds(60);
};

// One applicable transformation, as `analyze` reports it.
struct RewriteCandidate {
  std::string transformation;  // catalogue id, e.g. "widen_dma"
  std::string site;            // e.g. "S23"
  std::string plan_line;       // "builtin: widen_dma site=S23 ..."
  std::string description;     // one human sentence
  std::string target_engine;   // move_elementwise_engine: the engine work moves to ("vector", "gpsimd", ...)
  std::string source_engine;   // move_elementwise_engine: where it runs now ("vector", ..., or "auto": ACT or DVE)
};

struct RewriteResult {
  std::string source;
  std::string description;
  std::string before_snippet;
  std::string after_snippet;
};

class Rewriter {
 public:
  explicit Rewriter(RewriterOptions options);

  // The applicable transformations, in the engine's order. FAILED_PRECONDITION with the engine's reason when
  // the kernel cannot be analysed; UNAVAILABLE when the sandboxed run itself failed.
  absl::StatusOr<std::vector<RewriteCandidate>> Analyze(const std::string& kernel_source) const;

  // Applies the plan given as one line ("builtin: <id> site=<site> ..."). FAILED_PRECONDITION with the
  // engine's precise reason when the plan does not apply.
  absl::StatusOr<RewriteResult> Apply(const std::string& kernel_source, const std::string& plan_line) const;

 private:
  absl::StatusOr<google::protobuf::Struct> Run(const std::string& kernel_source, std::vector<std::string> args) const;
  RewriterOptions options_;
};

// $ACCELOPT_REWRITER_DIR when set, else share/accelopt/builtin of the install prefix (or build tree).
std::string DefaultRewriterDir();

}  // namespace accelopt::builtin
