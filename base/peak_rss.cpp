#include "base/peak_rss.h"

#include <sys/resource.h>

namespace eppsim {
namespace {

double peak_of(int who) {
  rusage usage{};
  if (getrusage(who, &usage) != 0) return 0.0;
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports kilobytes
}

}  // namespace

double peak_rss_bytes() { return peak_of(RUSAGE_SELF); }

double peak_rss_of_children_bytes() { return peak_of(RUSAGE_CHILDREN); }

}  // namespace eppsim
