// Loads the probe library first thing, so its TLS block is among the first heap blocks of its
// size, touches it, and exits: LeakSanitizer then runs its check at exit. Exit code 0 means the
// check ran and found nothing; see CMakeLists.txt for what this guards.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
    return 2;
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  using TouchFn = const char* (*)();
  auto touch = reinterpret_cast<TouchFn>(dlsym(library, "kilnProbeTouchTls"));
  if (!touch) {
    std::fprintf(stderr, "%s has no kilnProbeTouchTls\n", argv[1]);
    return 2;
  }
  const char* message = touch();
  std::printf("thread_local holds %zu bytes\n", __builtin_strlen(message));
  return 0;
}
