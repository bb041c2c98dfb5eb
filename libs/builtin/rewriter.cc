#include "libs/builtin/rewriter.h"

#include <stdlib.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "libs/core/file.h"
#include "libs/core/resource_dir.h"
#include "libs/sandbox/sandbox.h"

namespace accelopt::builtin {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Struct;
using google::protobuf::Value;

std::string Text(const Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  return it != s.fields().end() && it->second.kind_case() == Value::kStringValue ? it->second.string_value() : "";
}

}  // namespace

std::string DefaultRewriterDir() {
  if (const char* env = std::getenv("ACCELOPT_REWRITER_DIR"); env != nullptr && *env != '\0') return env;
  return core::FindResourceDir("builtin", "nki_rewrite/cli.py");
}

Rewriter::Rewriter(RewriterOptions options) : options_(std::move(options)) {}

absl::StatusOr<Struct> Rewriter::Run(const std::string& kernel_source, std::vector<std::string> args) const {
  const char* tmp = std::getenv("TMPDIR");
  const std::string scratch_root = !options_.scratch_root.empty()   ? options_.scratch_root
                                   : tmp != nullptr && *tmp != '\0' ? std::string(tmp)
                                                                    : "/tmp";
  std::string scratch = scratch_root + "/accelopt-rewrite-XXXXXX";
  if (mkdtemp(scratch.data()) == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot create a scratch directory in ", scratch_root));
  }
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{scratch};
  if (auto s = core::WriteFileAtomic(scratch + "/kernel.py", kernel_source); !s.ok()) return s;

  sandbox::SandboxSpec spec;
  spec.scratch_dir = scratch;
  spec.read_only_binds = {{options_.rewriter_dir, "/rewriter"}};
  const std::string root = options_.use_bwrap ? "/rewriter" : options_.rewriter_dir;
  const std::string work = options_.use_bwrap ? "/scratch" : scratch;
  spec.argv = {options_.python, root + "/nki_rewrite/cli.py"};
  for (auto& a : args) spec.argv.push_back(a == "KERNEL" ? work + "/kernel.py" : std::move(a));
  spec.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", work}, {"PYTHONDONTWRITEBYTECODE", "1"}};
  spec.timeout = options_.timeout;
  spec.use_bwrap = options_.use_bwrap;
  spec.bwrap = options_.bwrap;
  spec.limits.memory_mb = 2048;
  spec.limits.cpu_seconds = 120;
  spec.sandbox_uid = 60100;
  auto outcome = sandbox::RunInSandbox(spec, nullptr);
  if (!outcome.ok()) return outcome.status();
  if (outcome->ending != sandbox::SandboxOutcome::Ending::kExited) {
    return absl::UnavailableError("the rewriter did not finish (timed out or was killed)");
  }
  // The CLI prints one JSON object on stdout (exit 0 ok, 3 not applicable); find it in the output.
  const std::string& out = outcome->output;
  auto open = out.find('{');
  Struct result;
  if (open == std::string::npos ||
      !google::protobuf::util::JsonStringToMessage(out.substr(open, out.rfind('}') - open + 1), &result).ok()) {
    return absl::UnavailableError(absl::StrCat("the rewriter printed no result (exit code ", outcome->exit_code, ")"));
  }
  auto ok = result.fields().find("ok");
  if (ok == result.fields().end() || !ok->second.bool_value()) {
    std::string reason = Text(result, "reason");
    return absl::FailedPreconditionError(reason.empty() ? "the rewriter refused without a reason" : reason);
  }
  return result;
}

absl::StatusOr<std::vector<RewriteCandidate>> Rewriter::Analyze(const std::string& kernel_source) const {
  auto result = Run(kernel_source, {"analyze", "--kernel", "KERNEL"});
  if (!result.ok()) return result.status();
  std::vector<RewriteCandidate> candidates;
  auto list = result->fields().find("transformations");
  if (list == result->fields().end()) return candidates;
  for (const Value& v : list->second.list_value().values()) {
    const Struct& t = v.struct_value();
    RewriteCandidate c{Text(t, "transformation"), Text(t, "site"), Text(t, "plan"), Text(t, "description"), "",
                       Text(t, "source_engine")};
    if (auto params = t.fields().find("params"); params != t.fields().end()) {
      c.target_engine = Text(params->second.struct_value(), "engine");
    }
    if (!c.transformation.empty() && !c.plan_line.empty()) candidates.push_back(std::move(c));
  }
  return candidates;
}

absl::StatusOr<RewriteResult> Rewriter::Apply(const std::string& kernel_source, const std::string& plan_line) const {
  auto result = Run(kernel_source, {"apply", "--kernel", "KERNEL", "--plan", plan_line});
  if (!result.ok()) return result.status();
  RewriteResult r{Text(*result, "source"), Text(*result, "sentence"), Text(*result, "before_snippet"),
                  Text(*result, "after_snippet")};
  if (r.description.empty()) r.description = Text(*result, "description");
  if (r.source.empty()) return absl::UnavailableError("the rewriter returned no source");
  return r;
}

}  // namespace accelopt::builtin
