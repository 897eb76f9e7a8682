#include "runtime/bench/interference_point.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "runtime/mpi/mpi_wait.h"

namespace eppsim::runtime {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

int window_calls(double compute_alone_s, double comm_alone_s, double min_call_s) {
  return std::max(1, static_cast<int>(std::ceil(2.0 * compute_alone_s / std::max(comm_alone_s, min_call_s))));
}

WindowTimes run_window(ComputeQueue& queue, const StepClock& clock, const KernelPlan& plan, CommWindow& window,
                       int calls, double poll_s, double timeout_s, std::string_view what) {
  WindowTimes w;
  const double start_s = clock.now_s();
  ActivityId next = 0;
  queue.submit(next++, 0, plan);
  queue.submit(next++, 0, plan);
  window.start(calls);
  std::optional<WindowSpan> span;
  double last_end_s = start_s;
  while (!span || queue.in_flight() > 0) {
    if (!span) {
      span = window.poll();
      if (!span && clock.now_s() - start_s > timeout_s) {
        throw MpiTimeout(fmt::format("{} beside compute: no answer within {} s", what, timeout_s));
      }
    }
    for (const Completion& c : queue.poll()) {
      if (!span || c.end_s <= span->end_s) w.compute_s.push_back(c.end_s - last_end_s);
      last_end_s = c.end_s;
      if (!span) queue.submit(next++, 0, plan);
    }
    if (!span) {
      queue.wait(poll_s);
    } else if (queue.in_flight() > 0) {  // not wait(-1) on an empty queue: not every queue returns from it
      queue.wait(-1.0);
    }
  }
  w.comm_per_call_s = span->length_s / calls;
  return w;
}

google::protobuf::Struct interference_row(const InterferenceSetting& s, const InterferencePoint& p) {
  google::protobuf::Struct row;
  auto& f = *row.mutable_fields();
  f["op"].set_string_value(std::string(comm_kind_name(s.op)));
  f["bytes"].set_number_value(static_cast<double>(s.bytes));
  f["group_size"].set_number_value(s.group_size);
  f["crosses_nodes"].set_bool_value(s.crosses_nodes);
  f["tokens"].set_number_value(static_cast<double>(s.tokens));
  f["iterations"].set_number_value(p.iterations);
  f["repeats"].set_number_value(s.repeats);
  f["compute_alone_s"].set_number_value(p.compute_alone_s);
  f["compute_beside_s"].set_number_value(p.compute_beside_s);
  f["comm_alone_s"].set_number_value(p.comm_alone_s);
  f["comm_beside_s"].set_number_value(p.comm_beside_s);
  f["compute_slowdown"].set_number_value(p.compute_beside_s / p.compute_alone_s);
  f["comm_slowdown"].set_number_value(p.comm_beside_s / p.comm_alone_s);
  f["correct"].set_bool_value(p.correct);
  return row;
}

}  // namespace eppsim::runtime
