#pragma once
// The time every runtime record uses: seconds since the step started on this
// rank (std::chrono::steady_clock). Ranks start their clocks right after a
// barrier; rank 0 later maps every rank's clock onto its own with measured
// offsets (runtime/trace_merge.h), since clocks of different hosts differ.
#include <chrono>

namespace eppsim::runtime {

class StepClock {
 public:
  StepClock() : start_(std::chrono::steady_clock::now()) {}
  void restart() { start_ = std::chrono::steady_clock::now(); }
  double now_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace eppsim::runtime
