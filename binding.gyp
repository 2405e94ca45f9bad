# node-gyp build (npm install / npm run build:native): build/Release/hcn.node, the shim build/Release/hcn-cni-shim
# (a static executable without Node, native/shim) and, off Windows, the simulator client build/Release/libhcnsim.so.
# Source lists live in native/sources.json, shared with CMakeLists.txt (cmake-js and the mingw cross build, which gyp
# cannot do).
{
  "target_defaults": {
    "include_dirs": ["native/include", "native/common"],
    "cflags": ["-Wall", "-Wextra", "-fvisibility=hidden"],
    "cflags_cc": ["-std=c++17", "-fvisibility-inlines-hidden"],
    "cflags!": ["-fno-exceptions"],
    "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
    "msvs_settings": {
      "VCCLCompilerTool": { "ExceptionHandling": 1, "AdditionalOptions": ["/std:c++17", "/utf-8", "/W4"] }
    }
  },
  "targets": [
    {
      "target_name": "hcn-cni-shim",
      "type": "executable",
      "sources": ["native/shim/shim_main.cc"],
      "conditions": [
        ["OS=='win'", { "sources": ["native/shim/shim_win.cc"], "libraries": ["advapi32.lib"] }, {
          "sources": ["native/shim/shim_posix.cc"],
          "ldflags": ["-static", "-s"]
        }]
      ]
    },
    {
      "target_name": "hcn",
      "sources": [
        "<!@(node -p \"require('./native/sources.json').common.join(' ')\")",
        "<!@(node -p \"require('./native/sources.json').addon.join(' ')\")"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
      "conditions": [
        ["OS=='win'", {
          "sources": ["<!@(node -p \"require('./native/sources.json').addon_win.join(' ')\")"],
          "defines": ["_WIN32_WINNT=0x0A00", "NOMINMAX"],
          "libraries": ["ole32.lib", "iphlpapi.lib", "advapi32.lib"]
        }, {
          "sources": ["<!@(node -p \"require('./native/sources.json').addon_posix.join(' ')\")"],
          "libraries": ["-ldl"]
        }]
      ]
    }
  ],
  "conditions": [
    ["OS!='win'", {
      "targets": [
        {
          "target_name": "hcnsim",
          "type": "shared_library",
          "product_prefix": "lib",
          "product_dir": "<(PRODUCT_DIR)",
          "sources": [
            "<!@(node -p \"require('./native/sources.json').common.join(' ')\")",
            "<!@(node -p \"require('./native/sources.json').simclient.join(' ')\")",
            "<!@(node -p \"require('./native/sources.json').simclient_posix.join(' ')\")"
          ],
          "defines": ["HCNSIM_EXPORT_V1", "HCNSIM_EXPORT_V2"]
        }
      ]
    }]
  ]
}
