// Prompt templates (<root>/<prompt set>/<name>.md) and their {{placeholder}} rendering.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "accelopt/v1/common.pb.h"

namespace accelopt::llm {

using PromptValues = absl::flat_hash_map<std::string, std::string>;

// Replaces every {{name}} (name: lower-case letters, digits, '_') in `text` with values[name], in one pass (a
// value's own text is never rescanned). FAILED_PRECONDITION naming the placeholder and `template_name` when a
// placeholder has no value. Other braces are left alone.
absl::StatusOr<std::string> RenderTemplate(absl::string_view text, const PromptValues& values,
                                           absl::string_view template_name);

// Templates are read on first use and cached for the life of the library. Thread-safe.
class PromptLibrary {
 public:
  explicit PromptLibrary(std::string root) : root_(std::move(root)) {}

  // Renders template `name` (e.g. "planner_user") of `prompt_set` (empty means "default").
  // INVALID_ARGUMENT naming model.prompt_set when the set name is not a plain directory name or the template
  // does not exist in it; FAILED_PRECONDITION from RenderTemplate.
  absl::StatusOr<std::string> Render(absl::string_view prompt_set, absl::string_view name,
                                     const PromptValues& values) const;

  // Loads `names` of `prompt_set`; the same errors as Render for a missing set or template.
  absl::Status Check(absl::string_view prompt_set, const std::vector<std::string>& names) const;

  // The set's name ("default" for empty) and the SHA-256 of its templates `names` (each name and text,
  // length-prefixed, in the order given). The same errors as Check.
  absl::StatusOr<v1::PromptSetUsed> Fingerprint(absl::string_view prompt_set,
                                                const std::vector<std::string>& names) const;

  const std::string& root() const { return root_; }

 private:
  absl::StatusOr<std::shared_ptr<const std::string>> Load(absl::string_view prompt_set, absl::string_view name) const;

  const std::string root_;
  mutable absl::Mutex mu_;
  mutable absl::flat_hash_map<std::string, std::shared_ptr<const std::string>> cache_ ABSL_GUARDED_BY(mu_);
};

// The prompt root used when LlmConfig.prompt_root is empty: share/accelopt/prompts of the install prefix (or of the
// build tree), found by core::FindResourceDir.
std::string DefaultPromptRoot();

}  // namespace accelopt::llm
