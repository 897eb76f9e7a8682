#include "base/peak_rss.h"

#include <sys/resource.h>

namespace eppsim {

double peak_rss_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0.0;
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports kilobytes
}

}  // namespace eppsim
