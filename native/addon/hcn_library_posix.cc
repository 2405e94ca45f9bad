#include <dlfcn.h>

#include "hcn_library.h"

namespace hcn {

LoadedLibraries LoadLibraries(const std::optional<std::string>& library_path) {
  LoadedLibraries loaded;
  if (!library_path || library_path->empty()) {
    loaded.load_error = "init({ libraryPath }) needs the simulator client library on this platform";
    return loaded;
  }
  // Never dlclose'd: function pointers from it may be in use on worker threads until the process exits.
  void* library = dlopen(library_path->c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    loaded.load_error = why != nullptr ? why : ("cannot load " + *library_path);
    return loaded;
  }
  loaded.hcn_loaded = loaded.v1_loaded = true;
  loaded.hcn_library = *library_path;
  for (int i = 0; i < kFnCount; ++i) loaded.symbols[i] = dlsym(library, FnName(static_cast<Fn>(i)));
  if (loaded.symbols[static_cast<int>(Fn::kHnsCall)] != nullptr) loaded.v1_library = *library_path;
  return loaded;
}

}  // namespace hcn
