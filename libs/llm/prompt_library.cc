#include "libs/llm/prompt_library.h"

#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "libs/core/file.h"
#include "libs/core/resource_dir.h"
#include "libs/core/sha256.h"

namespace accelopt::llm {
namespace {

bool IsPlaceholderChar(char c) { return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_'; }

bool IsPlainName(absl::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '-' && c != '.') return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> RenderTemplate(absl::string_view text, const PromptValues& values,
                                           absl::string_view template_name) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = text.find("{{", pos);
    if (open == absl::string_view::npos) break;
    size_t name_start = open + 2;
    size_t name_end = name_start;
    while (name_end < text.size() && IsPlaceholderChar(text[name_end])) ++name_end;
    if (name_end == name_start || text.substr(name_end, 2) != "}}") {
      absl::StrAppend(&out, text.substr(pos, name_start - pos));
      pos = name_start;
      continue;
    }
    absl::string_view name = text.substr(name_start, name_end - name_start);
    auto value = values.find(name);
    if (value == values.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat("prompt ", template_name, ": placeholder {{", name, "}} has no value"));
    }
    absl::StrAppend(&out, text.substr(pos, open - pos));
    out.append(value->second);
    pos = name_end + 2;
  }
  absl::StrAppend(&out, text.substr(pos));
  return out;
}

absl::StatusOr<std::shared_ptr<const std::string>> PromptLibrary::Load(absl::string_view prompt_set,
                                                                       absl::string_view name) const {
  if (prompt_set.empty()) prompt_set = "default";
  if (!IsPlainName(prompt_set)) {
    return absl::InvalidArgumentError(
        absl::StrCat("model.prompt_set: '", prompt_set, "' is not a plain directory name"));
  }
  std::string key = absl::StrCat(prompt_set, "/", name, ".md");
  {
    absl::MutexLock lock(&mu_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  absl::StatusOr<std::string> text = core::ReadFile(absl::StrCat(root_, "/", key));
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("model.prompt_set: prompt set '", prompt_set, "' has no ", name,
                                                   ".md under ", root_, " (", text.status().message(), ")"));
  }
  auto shared = std::make_shared<const std::string>(*std::move(text));
  absl::MutexLock lock(&mu_);
  cache_.emplace(key, shared);
  return shared;
}

absl::StatusOr<std::string> PromptLibrary::Render(absl::string_view prompt_set, absl::string_view name,
                                                  const PromptValues& values) const {
  absl::StatusOr<std::shared_ptr<const std::string>> text = Load(prompt_set, name);
  if (!text.ok()) return text.status();
  return RenderTemplate(**text, values, absl::StrCat(prompt_set.empty() ? "default" : prompt_set, "/", name, ".md"));
}

absl::Status PromptLibrary::Check(absl::string_view prompt_set, const std::vector<std::string>& names) const {
  for (const std::string& name : names) {
    absl::StatusOr<std::shared_ptr<const std::string>> text = Load(prompt_set, name);
    if (!text.ok()) return text.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::PromptSetUsed> PromptLibrary::Fingerprint(absl::string_view prompt_set,
                                                             const std::vector<std::string>& names) const {
  std::string hashed;
  for (const std::string& name : names) {
    absl::StatusOr<std::shared_ptr<const std::string>> text = Load(prompt_set, name);
    if (!text.ok()) return text.status();
    absl::StrAppend(&hashed, name.size(), ":", name, (*text)->size(), ":", **text);
  }
  v1::PromptSetUsed used;
  used.set_name(prompt_set.empty() ? "default" : std::string(prompt_set));
  used.set_sha256(core::Sha256Hex(hashed));
  return used;
}

std::string DefaultPromptRoot() { return core::FindResourceDir("prompts", "default"); }

}  // namespace accelopt::llm
