// Experience exports (JSON lines) through memory::ParseExperienceJsonLines; every parsed experience must
// survive ExperienceToJson and parse back to the same message.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/util/message_differencer.h"
#include "services/memory/experience_jsonl.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view jsonl(reinterpret_cast<const char*>(data), size);
  auto experiences = accelopt::memory::ParseExperienceJsonLines(jsonl);
  if (!experiences.ok()) return 0;
  for (const auto& experience : *experiences) {
    const std::string line = accelopt::memory::ExperienceToJson(experience);
    auto again = accelopt::memory::ParseExperienceJsonLines(line);
    if (!again.ok() || again->size() != 1) __builtin_trap();
    if (!google::protobuf::util::MessageDifferencer::Equals(experience, again->front())) __builtin_trap();
  }
  return 0;
}
