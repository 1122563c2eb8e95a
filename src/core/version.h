#pragma once

namespace kiln {

// kiln's version, as written into plans and timing caches.
inline const char* kilnVersion() { return KILN_VERSION_STRING; }

}  // namespace kiln
