// hcn.node imports N-API from "node.exe" through a delay-load import library. When the host executable has another
// name (a single-executable cni.exe, a renamed node.exe), loading "node.exe" by name would fail or find the wrong
// file; this hook hands the delay loader the running executable instead. node-gyp's MSVC builds carry the same hook.
#include <windows.h>
#include <delayimp.h>

#include <cstring>

static FARPROC WINAPI LoadExeHook(unsigned int event, DelayLoadInfo* info) {
  if (event != dliNotePreLoadLibrary) return nullptr;
  if (_stricmp(info->szDll, "node.exe") != 0) return nullptr;
  return reinterpret_cast<FARPROC>(GetModuleHandleW(nullptr));
}

// Matches the declaration in mingw-w64's <delayimp.h> (not const there, unlike recent MSVC SDKs).
extern "C" {
PfnDliHook __pfnDliNotifyHook2 = LoadExeHook;
}
