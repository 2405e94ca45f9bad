# Cross-compiles the addon and the stand-in HCN DLLs for win-x64 with mingw-w64 (Debian: g++-mingw-w64-x86-64-posix).
# The -posix compilers are required: node-addon-api uses std::mutex, which the win32 thread model lacks.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(HCN_MINGW_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${HCN_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${HCN_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${HCN_MINGW_TRIPLE}-windres)
set(CMAKE_DLLTOOL ${HCN_MINGW_TRIPLE}-dlltool)

set(CMAKE_FIND_ROOT_PATH /usr/${HCN_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
