#include "js_args.h"

#include <cmath>

#include "guid.h"

namespace hcn {
namespace {

[[noreturn]] void Usage(const Napi::CallbackInfo& info, const char* usage, const std::string& problem) {
  throw Napi::TypeError::New(info.Env(), problem + ". Usage: " + usage);
}

bool IsNullish(const Napi::Value& value) { return value.IsNull() || value.IsUndefined(); }

GUID ParseGuidArg(const Napi::CallbackInfo& info, size_t index, const std::string& text, const char* usage) {
  GUID guid;
  if (!ParseGuid(text, &guid)) Usage(info, usage, "argument " + std::to_string(index + 1) + " is not a GUID: " + text);
  return guid;
}

}  // namespace

std::u16string StringArg(const Napi::CallbackInfo& info, size_t index, const char* usage) {
  if (!info[index].IsString()) Usage(info, usage, "argument " + std::to_string(index + 1) + " must be a string");
  return info[index].As<Napi::String>().Utf16Value();
}

std::optional<std::u16string> NullableStringArg(const Napi::CallbackInfo& info, size_t index, const char* usage) {
  if (IsNullish(info[index])) return std::nullopt;
  return StringArg(info, index, usage);
}

GUID GuidArg(const Napi::CallbackInfo& info, size_t index, const char* usage) {
  if (!info[index].IsString()) Usage(info, usage, "argument " + std::to_string(index + 1) + " must be a GUID string");
  return ParseGuidArg(info, index, info[index].As<Napi::String>().Utf8Value(), usage);
}

GUID NullableGuidArg(const Napi::CallbackInfo& info, size_t index, const char* usage) {
  if (IsNullish(info[index]) || (info[index].IsString() && info[index].As<Napi::String>().Utf8Value().empty())) {
    return GUID{};
  }
  return GuidArg(info, index, usage);
}

Fn ListedFunctionArg(const Napi::CallbackInfo& info, size_t index, FnVerb verb, const char* usage) {
  if (!info[index].IsString()) {
    Usage(info, usage, "argument " + std::to_string(index + 1) + " must be the name of a function of the list");
  }
  const std::string name = info[index].As<Napi::String>().Utf8Value();
  const std::optional<Fn> fn = FnNamed(name);
  if (!fn || VerbOf(*fn) != verb) Usage(info, usage, name + " is no function of the list of this verb");
  return *fn;
}

int64_t IntegerArg(const Napi::CallbackInfo& info, size_t index, int64_t max, const char* usage) {
  const std::string problem = "argument " + std::to_string(index + 1) + " must be an integer from 0 to " +
                              std::to_string(max);
  if (!info[index].IsNumber()) Usage(info, usage, problem);
  const double value = info[index].As<Napi::Number>().DoubleValue();
  if (!(value >= 0) || value > static_cast<double>(max) || std::floor(value) != value) Usage(info, usage, problem);
  return static_cast<int64_t>(value);
}

}  // namespace hcn
