#include "services/memory/experience_jsonl.h"

#include <google/protobuf/util/json_util.h>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "services/memory/experience_store.h"

namespace accelopt::memory {
namespace {

constexpr size_t kMaxIdBytes = 256;

absl::Status ValidateExperience(const v1::Experience& e) {
  if (e.id().empty()) return absl::InvalidArgumentError("id is empty");
  if (e.id().size() > kMaxIdBytes) return absl::InvalidArgumentError("id is longer than 256 bytes");
  for (char c : e.id()) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError("id contains a control character");
    }
  }
  if (absl::Status s = ValidateNamespace(e.namespace_(), "namespace"); !s.ok()) return s;
  if (e.summary().empty()) return absl::InvalidArgumentError("summary is empty");
  if (!(e.speedup() >= 1.0)) return absl::InvalidArgumentError(absl::StrCat("speedup ", e.speedup(), " is below 1"));
  if (e.sequence() < 0) return absl::InvalidArgumentError("sequence is negative");
  return absl::OkStatus();
}

// Protobuf's JSON parser follows its first line with a caret under a copy of the text it parsed; only the first
// line means anything without that text.
std::string ParserMessage(absl::string_view message) {
  return std::string(absl::StripAsciiWhitespace(message.substr(0, message.find('\n'))));
}

}  // namespace

std::string ExperienceToJson(const v1::Experience& experience) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  // Printing a valid message cannot fail.
  (void)google::protobuf::util::MessageToJsonString(experience, &json, options);
  return json;
}

absl::StatusOr<std::vector<v1::Experience>> ParseExperienceJsonLines(absl::string_view jsonl) {
  if (jsonl.size() > kMaxImportBytes) {
    return absl::InvalidArgumentError(absl::StrCat("jsonl: ", jsonl.size(), " bytes is over the import limit of ",
                                                   kMaxImportBytes, " bytes (8 MiB); split the file"));
  }
  std::vector<v1::Experience> experiences;
  absl::flat_hash_map<std::string, int> line_of_id;
  int line_number = 0;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  for (absl::string_view line : absl::StrSplit(jsonl, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    v1::Experience e;
    auto parsed = google::protobuf::util::JsonStringToMessage(std::string(line), &e, options);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "jsonl line ", line_number, ": not an Experience: ", ParserMessage(parsed.message().as_string())));
    }
    if (absl::Status s = ValidateExperience(e); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("jsonl line ", line_number, ": ", s.message()));
    }
    auto [it, inserted] = line_of_id.try_emplace(e.id(), line_number);
    if (!inserted) {
      return absl::InvalidArgumentError(
          absl::StrCat("jsonl line ", line_number, ": id '", e.id(), "' repeats line ", it->second));
    }
    experiences.push_back(std::move(e));
  }
  return experiences;
}

}  // namespace accelopt::memory
