#include "libs/config/config_loader.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "libs/core/file.h"
#include "libs/core/log.h"
#include "libs/core/status_macros.h"

namespace accelopt::config {
namespace {

using core::JsonEscape;
using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;

std::string JoinPath(absl::string_view parent, absl::string_view key) {
  return parent.empty() ? std::string(key) : absl::StrCat(parent, ".", key);
}

std::string Where(const YAML::Node& node) {
  const YAML::Mark& mark = node.Mark();
  return mark.line >= 0 ? absl::StrCat(" (line ", mark.line + 1, ")") : "";
}

// Converts YAML into JSON text following the message's descriptor, so that scalars get the JSON type the
// field expects and unknown keys are caught with their full path.
// Keys listed in `extra_keys` (dotted paths) are not mapped onto the message: their single values go to
// `extra_values`.
class YamlToJson {
 public:
  // `max_output` bounds the JSON text: YAML aliases repeat a node wherever they appear, so a few lines of anchors
  // can stand for gigabytes.
  YamlToJson(absl::string_view source, const std::set<std::string>& extra_keys,
             std::map<std::string, std::string>* extra_values, size_t max_output)
      : source_(source), extra_keys_(extra_keys), extra_values_(extra_values), max_output_(max_output) {}

  absl::Status Message(const YAML::Node& node, const Descriptor* desc, const std::string& path, std::string* out) {
    ACCELOPT_RETURN_IF_ERROR(Bounded(*out));
    if (node.IsNull()) {
      *out += "{}";
      return absl::OkStatus();
    }
    if (!node.IsMap()) {
      return Error(path, node, absl::StrCat("expected a mapping for ", desc->name()));
    }
    *out += "{";
    bool first = true;
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) return Error(path, kv.first, "a mapping key must be a plain name");
      std::string key = kv.first.Scalar();
      if (!seen.insert(key).second) return Error(JoinPath(path, key), kv.first, "the key appears twice");
      if (extra_keys_.count(JoinPath(path, key)) > 0) {
        if (kv.second.IsNull()) continue;
        if (!kv.second.IsScalar()) return Error(JoinPath(path, key), kv.second, "expected a single value");
        (*extra_values_)[JoinPath(path, key)] = kv.second.Scalar();
        continue;
      }
      const FieldDescriptor* field = desc->FindFieldByName(key);
      for (int i = 0; field == nullptr && i < desc->field_count(); ++i) {
        if (desc->field(i)->json_name() == key) field = desc->field(i);
      }
      if (field == nullptr) {
        std::vector<std::string> known;
        for (int i = 0; i < desc->field_count(); ++i) known.push_back(desc->field(i)->name());
        for (const std::string& extra : extra_keys_) {
          const size_t dot = extra.rfind('.');
          const std::string parent = dot == std::string::npos ? "" : extra.substr(0, dot);
          if (parent == path) known.push_back(extra.substr(dot == std::string::npos ? 0 : dot + 1));
        }
        return absl::InvalidArgumentError(absl::StrCat(source_, ": unknown key '", JoinPath(path, key), "'",
                                                       Where(kv.first),
                                                       "; known keys here: ", absl::StrJoin(known, ", ")));
      }
      if (kv.second.IsNull()) continue;
      if (!first) *out += ",";
      first = false;
      absl::StrAppend(out, "\"", field->name(), "\":");
      ACCELOPT_RETURN_IF_ERROR(Field(kv.second, field, JoinPath(path, key), out));
    }
    *out += "}";
    return absl::OkStatus();
  }

 private:
  absl::Status Field(const YAML::Node& node, const FieldDescriptor* field, const std::string& path, std::string* out) {
    if (field->is_map()) {
      if (!node.IsMap()) return Error(path, node, "expected a mapping");
      const FieldDescriptor* value_field = field->message_type()->map_value();
      *out += "{";
      bool first = true;
      for (const auto& kv : node) {
        if (!first) *out += ",";
        first = false;
        if (!kv.first.IsScalar()) return Error(path, kv.first, "a mapping key must be a plain name");
        std::string key = kv.first.Scalar();
        absl::StrAppend(out, "\"", JsonEscape(key), "\":");
        ACCELOPT_RETURN_IF_ERROR(Single(kv.second, value_field, JoinPath(path, key), out));
      }
      *out += "}";
      return absl::OkStatus();
    }
    if (field->is_repeated()) {
      if (!node.IsSequence()) return Error(path, node, "expected a list");
      *out += "[";
      for (size_t i = 0; i < node.size(); ++i) {
        if (i > 0) *out += ",";
        ACCELOPT_RETURN_IF_ERROR(Single(node[i], field, absl::StrCat(path, "[", i, "]"), out));
      }
      *out += "]";
      return absl::OkStatus();
    }
    return Single(node, field, path, out);
  }

  absl::Status Single(const YAML::Node& node, const FieldDescriptor* field, const std::string& path, std::string* out) {
    if (field->type() == FieldDescriptor::TYPE_MESSAGE) {
      if (field->message_type()->full_name() == "google.protobuf.Struct" ||
          field->message_type()->full_name() == "google.protobuf.Value") {
        return Free(node, out);
      }
      if (field->message_type()->full_name() == "google.protobuf.Timestamp") {
        return Scalar(node, path, true, out);
      }
      return Message(node, field->message_type(), path, out);
    }
    if (!node.IsScalar()) return Error(path, node, "expected a single value");
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING:
        return Scalar(node, path, true, out);
      case FieldDescriptor::CPPTYPE_BOOL: {
        std::string v = absl::AsciiStrToLower(node.Scalar());
        if (v != "true" && v != "false") return Error(path, node, "expected true or false");
        *out += v;
        return absl::OkStatus();
      }
      case FieldDescriptor::CPPTYPE_ENUM: {
        const EnumDescriptor* e = field->enum_type();
        std::string v = node.Scalar();
        if (e->FindValueByName(v) == nullptr) {
          // Friendly form: "sim-trn1" -> DEVICE_SIM_TRN1 (the enum's prefix is its first value's name
          // minus "UNSPECIFIED").
          std::string prefix = e->value(0)->name();
          prefix = prefix.substr(0, prefix.rfind("UNSPECIFIED"));
          std::string friendly = prefix + absl::AsciiStrToUpper(absl::StrReplaceAll(v, {{"-", "_"}}));
          if (e->FindValueByName(friendly) == nullptr || friendly == e->value(0)->name()) {
            std::vector<std::string> allowed;
            for (int i = 1; i < e->value_count(); ++i) {
              allowed.push_back(
                  absl::AsciiStrToLower(absl::StrReplaceAll(e->value(i)->name().substr(prefix.size()), {{"_", "-"}})));
            }
            return Error(path, node, absl::StrCat("'", v, "' is not one of ", absl::StrJoin(allowed, ", ")));
          }
          v = friendly;
        }
        absl::StrAppend(out, "\"", v, "\"");
        return absl::OkStatus();
      }
      default: {
        // Numbers: let the JSON parser check the range; reject obvious non-numbers here with the path.
        const std::string& v = node.Scalar();
        if (v.empty() ||
            !(std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-' || v[0] == '+' || v[0] == '.')) {
          return Error(path, node, absl::StrCat("'", v, "' is not a number"));
        }
        *out += v;
        return absl::OkStatus();
      }
    }
  }

  absl::Status Scalar(const YAML::Node& node, const std::string& path, bool quote, std::string* out) {
    if (!node.IsScalar()) return Error(path, node, "expected a single value");
    absl::StrAppend(out, "\"", JsonEscape(node.Scalar()), "\"");
    return absl::OkStatus();
  }

  // Free-form values (google.protobuf.Struct): numbers stay numbers when they parse as such.
  absl::Status Free(const YAML::Node& node, std::string* out) {
    ACCELOPT_RETURN_IF_ERROR(Bounded(*out));
    if (node.IsMap()) {
      *out += "{";
      bool first = true;
      std::set<std::string> seen;
      for (const auto& kv : node) {
        if (!first) *out += ",";
        first = false;
        if (!kv.first.IsScalar()) return absl::InvalidArgumentError("a mapping key must be a plain name");
        if (!seen.insert(kv.first.Scalar()).second) {
          return Error(kv.first.Scalar(), kv.first, "the key appears twice");
        }
        absl::StrAppend(out, "\"", JsonEscape(kv.first.Scalar()), "\":");
        ACCELOPT_RETURN_IF_ERROR(Free(kv.second, out));
      }
      *out += "}";
    } else if (node.IsSequence()) {
      *out += "[";
      for (size_t i = 0; i < node.size(); ++i) {
        if (i > 0) *out += ",";
        ACCELOPT_RETURN_IF_ERROR(Free(node[i], out));
      }
      *out += "]";
    } else if (node.IsNull()) {
      *out += "null";
    } else {
      const std::string& v = node.Scalar();
      double d;
      bool is_plain = node.Tag() != "!";  // quoted scalars carry the "!" tag in yaml-cpp
      if (is_plain && (v == "true" || v == "false")) {
        *out += v;
      } else if (is_plain && YAML::convert<double>::decode(node, d)) {
        *out += v;
      } else {
        absl::StrAppend(out, "\"", JsonEscape(v), "\"");
      }
    }
    return absl::OkStatus();
  }

  absl::Status Bounded(const std::string& out) const {
    if (out.size() <= max_output_) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ": expands to more than ", max_output_, " bytes (YAML aliases repeat what they name)"));
  }

  absl::Status Error(const std::string& path, const YAML::Node& node, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": key '", path, "'", Where(node), ": ", what));
  }

  std::string source_;
  const std::set<std::string>& extra_keys_;
  std::map<std::string, std::string>* extra_values_;
  const size_t max_output_;
};

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseConfigTextWithExtraKeys(absl::string_view text,
                                                                                absl::string_view source,
                                                                                const std::set<std::string>& extra_keys,
                                                                                google::protobuf::Message* message) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not valid YAML or JSON (line ", e.mark.line + 1, "): ", e.msg));
  }
  std::string json;
  std::map<std::string, std::string> extra_values;
  // JSON text is at most 6 bytes per input byte (\uXXXX escapes) without aliases.
  YamlToJson converter(source, extra_keys, &extra_values, 6 * text.size() + (1 << 20));
  ACCELOPT_RETURN_IF_ERROR(converter.Message(root, message->GetDescriptor(), "", &json));
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  message->Clear();
  auto status = google::protobuf::util::JsonStringToMessage(json, message, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", status.message().as_string()));
  }
  return extra_values;
}

absl::Status ParseConfigText(absl::string_view text, absl::string_view source, google::protobuf::Message* message) {
  return ParseConfigTextWithExtraKeys(text, source, {}, message).status();
}

absl::Status LoadConfigFile(const std::string& path, google::protobuf::Message* message) {
  ACCELOPT_ASSIGN_OR_RETURN(std::string text, core::ReadFile(path));
  return ParseConfigText(text, path, message);
}

std::string ToJson(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

}  // namespace accelopt::config
