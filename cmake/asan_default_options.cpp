// Linked into kiln's executables in AddressSanitizer builds (KILN_SANITIZE=address,...), so the
// options below hold however a test or the command line is started: by ctest, by hand, or from a
// test script.
//
// intercept_tls_get_addr=0. GCC 12's sanitizer runtime (and LLVM's up to 16) intercepts
// __tls_get_addr and, when a dynamic TLS block starts 16 bytes into a page, takes the 16 bytes
// before it for a glibc 2.19 header holding the block's real range. Since glibc 2.25 there is no
// such header: a malloc'ed block (a dlopen'ed plugin library's thread_local) can land there by
// chance, the runtime records a garbage range, and at exit LeakSanitizer's tracer reads it and
// dies ("Tracer caught signal 11", "LeakSanitizer has encountered a fatal error") after every
// test has passed. Where the block lands depends on every allocation before it, so it struck a
// CI run on a clean clone and no local run. A ten-line probe (a library with one thread_local,
// dlopen'ed before any other 48-byte allocation) fails every time with the interceptor and never
// without. The leak check loses nothing: it reaches the DTLS blocks through the thread
// descriptor, and the probe with a 200-byte thread_local string reported no leak.

extern "C" const char* __asan_default_options() { return "intercept_tls_get_addr=0"; }
