#include "js_library.h"

#include "hcn_library.h"

namespace hcn {
namespace {

Napi::Value NullableString(Napi::Env env, const std::optional<std::string>& text) {
  return text ? Napi::String::New(env, *text) : env.Null();
}

Napi::Array Strings(Napi::Env env, const std::vector<std::string>& list) {
  Napi::Array out = Napi::Array::New(env, list.size());
  for (uint32_t i = 0; i < list.size(); ++i) out.Set(i, list[i]);
  return out;
}

Napi::Object ToJs(Napi::Env env, const Capabilities& caps) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("v2Supported", caps.v2_supported);
  out.Set("v1Supported", caps.v1_supported);
  out.Set("hcsSupported", caps.hcs_supported);
  out.Set("hcnLibrary", NullableString(env, caps.hcn_library));
  out.Set("v1Library", NullableString(env, caps.v1_library));
  out.Set("missing", Strings(env, caps.missing));
  out.Set("optional", Strings(env, caps.optional));
  out.Set("adapterSource", caps.adapter_source);
  out.Set("loadError", NullableString(env, caps.load_error));
  return out;
}

}  // namespace

Napi::Value JsInit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "Usage: init({ libraryPath?: string })";
  std::optional<std::string> library_path;
  if (info.Length() >= 1 && !info[0].IsUndefined()) {
    if (!info[0].IsObject()) throw Napi::TypeError::New(env, usage);
    Napi::Value path = info[0].As<Napi::Object>().Get("libraryPath");
    if (path.IsString()) {
      library_path = path.As<Napi::String>().Utf8Value();
    } else if (!path.IsUndefined() && !path.IsNull()) {
      throw Napi::TypeError::New(env, usage);
    }
  }
  return ToJs(env, Library::Instance().Init(library_path));
}

Napi::Value JsCapabilities(const Napi::CallbackInfo& info) {
  return ToJs(info.Env(), Library::Instance().GetCapabilities());
}

Napi::Value JsStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Library& library = Library::Instance();
  Napi::Object calls = Napi::Object::New(env);
  for (const auto& [name, count] : library.CallCounts()) calls.Set(name, static_cast<double>(count));
  Napi::Object out = Napi::Object::New(env);
  out.Set("calls", calls);
  out.Set("frees", static_cast<double>(library.FreeCount()));
  return out;
}

}  // namespace hcn
