#include "services/memory/summarizer_registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace accelopt::memory {

void SummarizerRegistry::Register(const std::string& provider, std::unique_ptr<Summarizer> summarizer) {
  providers_[provider] = std::move(summarizer);
}

absl::StatusOr<Summarizer*> SummarizerRegistry::Find(absl::string_view provider) const {
  auto it = providers_.find(provider);
  if (it == providers_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model.provider: '", provider, "' is not available in this memory service (available: ",
                     providers_.empty() ? "none" : absl::StrJoin(Providers(), ", "), ")"));
  }
  return it->second.get();
}

std::vector<std::string> SummarizerRegistry::Providers() const {
  std::vector<std::string> names;
  for (const auto& [name, unused] : providers_) names.push_back(name);
  return names;
}

}  // namespace accelopt::memory
