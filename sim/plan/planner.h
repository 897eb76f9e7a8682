#pragma once
// A planner turns one sampled global batch into a Schedule for the scenario's
// cluster. Every strategy implements this interface; nothing downstream of the
// Schedule knows which planner made it.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "traces/scenario.h"
#include "traces/schedule.pb.h"

namespace eppsim {

class Planner {
 public:
  virtual ~Planner() = default;
  virtual std::string name() const = 0;
  // Throws InputError when the scenario's shape does not suit the strategy or
  // the batch cannot fit in GPU memory; the message says what to change.
  virtual proto::Schedule plan(const ResolvedScenario& scenario, std::span<const std::uint64_t> sequence_lengths) const = 0;
};

// Names of every strategy, in a stable order.
std::vector<std::string> planner_names();
// Throws InputError listing the known strategies when `strategy` is unknown.
std::unique_ptr<Planner> make_planner(std::string_view strategy);

// The global batch a scenario describes: sampled with its seed.
std::vector<std::uint64_t> sample_batch(const ResolvedScenario& scenario);

}  // namespace eppsim
