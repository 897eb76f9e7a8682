#include "sim/engine/op_prices.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "models/cost_model.h"
#include "models/network/closed_form_network.h"
#include "tests/schedule/schedule_fixture.h"

namespace eppsim {
namespace {

using testing::HandSchedule;

// Forward 1 ms, backward 2 ms; counts the compute calls; one node's closed-form network.
class CountingCostModel final : public CostModel {
 public:
  ComputeCost compute_cost(const ComputeWork& work) const override {
    ++compute_calls;
    return ComputeCost{{}, {}, Seconds(work.pass == Pass::Backward ? 2e-3 : 1e-3)};
  }
  Seconds optimizer_time(Bytes) const override { return Seconds(0.5e-3); }
  const NetworkTimeModel& network() const override { return network_; }
  mutable int compute_calls = 0;

 private:
  ClosedFormNetwork network_{LinkParams{BytesPerSecond(1e9), Seconds(1e-6)}, LinkParams{BytesPerSecond(1e9), Seconds(1e-6)},
                             std::vector<std::uint32_t>(8, 0)};
};

proto::ComputeOp layer_from(std::uint32_t first_layer, proto::Phase phase = proto::FORWARD) {
  auto work = HandSchedule::forward_layer();
  work.set_first_layer(first_layer);
  work.set_phase(phase);
  return work;
}

std::vector<std::uint32_t> words_of(OpPrices& prices, const proto::Schedule& schedule, std::uint32_t rank) {
  std::vector<std::uint32_t> words(static_cast<std::size_t>(schedule.programs(static_cast<int>(rank)).stream_size()), 0);
  prices.price_rank(rank, words);
  return words;
}

// Works that differ only in what no cost model reads (which layers past the
// first: their first_layer) are one class, priced once with its first work,
// on whichever rank meets the class first.
TEST(OpPrices, WorksOfEqualInputsShareOnePrice) {
  HandSchedule h(2);
  h.compute(0, 0, {}, layer_from(3));                    // shared_computes[0]
  h.compute(0, 0, {}, layer_from(5));                    // [1]: [0]'s inputs
  h.compute(0, 0, {}, layer_from(3, proto::BACKWARD));   // [2]: another pass
  h.compute(1, 0, {}, layer_from(7));                    // [3]: [0]'s inputs, met first on rank 1
  h.compute(1, 0, {}, layer_from(9, proto::BACKWARD));   // [4]: [2]'s inputs
  ASSERT_EQ(h.schedule().shared_computes_size(), 5);
  CountingCostModel cost;
  OpPrices prices(h.schedule(), cost);
  const auto rank1 = words_of(prices, h.schedule(), 1);
  EXPECT_EQ(cost.compute_calls, 2);
  const auto rank0 = words_of(prices, h.schedule(), 0);
  EXPECT_EQ(cost.compute_calls, 2);
  EXPECT_EQ(rank0[0], rank1[0]);
  EXPECT_EQ(rank0[1], rank1[0]);
  EXPECT_EQ(rank0[2], rank1[1]);
  EXPECT_NE(rank0[0], rank0[2]);
  EXPECT_DOUBLE_EQ(prices.of(rank0[0]).duration_s, 1e-3);
  EXPECT_DOUBLE_EQ(prices.of(rank0[2]).duration_s, 2e-3);
}

// A work of other inputs is priced on its own, even between works of one class.
TEST(OpPrices, WorksOfOtherInputsArePricedApart) {
  HandSchedule h(1);
  auto longer = layer_from(0);
  longer.set_layer_count(2);
  h.compute(0, 0, {}, layer_from(0));
  h.compute(0, 0, {}, longer);
  h.compute(0, 0, {}, layer_from(4));
  CountingCostModel cost;
  OpPrices prices(h.schedule(), cost);
  words_of(prices, h.schedule(), 0);
  EXPECT_EQ(cost.compute_calls, 3);  // first_layer 0 and 4 differ: whether a work has the first layer is read
}

}  // namespace
}  // namespace eppsim
