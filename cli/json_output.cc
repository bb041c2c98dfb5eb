#include "cli/json_output.h"

#include "absl/strings/numbers.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "libs/core/enum_name.h"

namespace accelopt::cli {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

bool IsWellKnownType(const Descriptor& desc) { return desc.file()->package() == "google.protobuf"; }

void AdjustMessage(const Descriptor& desc, nlohmann::json& object);

// Rewrites one value of `field` from protobuf's JSON form into the CLI's.
void AdjustValue(const FieldDescriptor& field, nlohmann::json& value) {
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t n = 0;
      if (value.is_string() && absl::SimpleAtoi(value.get<std::string>(), &n)) value = n;
      return;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t n = 0;
      if (value.is_string() && absl::SimpleAtoi(value.get<std::string>(), &n)) value = n;
      return;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const google::protobuf::EnumValueDescriptor* v =
          value.is_string() ? field.enum_type()->FindValueByName(value.get<std::string>()) : nullptr;
      if (v == nullptr) return;  // a number the enum does not define stays a number
      value = v->index() == 0 ? nlohmann::json(nullptr) : nlohmann::json(core::ShortEnumName(*v));
      return;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      if (!IsWellKnownType(*field.message_type())) AdjustMessage(*field.message_type(), value);
      return;
    default:
      return;
  }
}

void AdjustMessage(const Descriptor& desc, nlohmann::json& object) {
  if (!object.is_object()) return;
  for (int i = 0; i < desc.field_count(); ++i) {
    const FieldDescriptor& field = *desc.field(i);
    auto it = object.find(field.name());
    if (it == object.end()) {
      if (field.has_optional_keyword() && field.cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
        object[field.name()] = nullptr;
      }
      continue;
    }
    if (field.is_map()) {
      for (auto& entry : it->items()) AdjustValue(*field.message_type()->map_value(), entry.value());
    } else if (field.is_repeated()) {
      for (auto& element : *it) AdjustValue(field, element);
    } else {
      AdjustValue(field, *it);
    }
  }
}

}  // namespace

nlohmann::json ProtoToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string text;
  // Printing a valid message cannot fail; an empty object is the answer for a message that somehow does.
  if (!google::protobuf::util::MessageToJsonString(message, &text, options).ok()) return nlohmann::json::object();
  nlohmann::json json = nlohmann::json::parse(text);
  if (!IsWellKnownType(*message.GetDescriptor())) AdjustMessage(*message.GetDescriptor(), json);
  return json;
}

std::string JsonText(const nlohmann::json& value, bool pretty) {
  return value.dump(pretty ? 2 : -1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace accelopt::cli
