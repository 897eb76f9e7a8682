#include "sim/engine/endpoint_sharing.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace eppsim {
namespace {

// Finishing times reported by one update(), by flow.
std::map<FlowId, double> update(EndpointSharing& sharing, double now_s) {
  std::map<FlowId, double> moved;
  sharing.update(now_s, [&](FlowId f, double finish_s) { moved[f] = finish_s; });
  return moved;
}

TEST(EndpointSharing, AFlowAloneRunsAtFullSpeed) {
  EndpointSharing sharing(4);
  const std::array<PortId, 2> ports{0, 1};
  const FlowId f = sharing.add(ports, 2.0, 1.0);
  EXPECT_TRUE(sharing.pending());
  const auto moved = update(sharing, 1.0);
  EXPECT_FALSE(sharing.pending());
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_DOUBLE_EQ(moved.at(f), 3.0);
  EXPECT_DOUBLE_EQ(sharing.rate(f), 1.0);
}

TEST(EndpointSharing, ALoweredCapacitySlowsItsFlowsFromThenOn) {
  EndpointSharing sharing(3);
  const std::array<PortId, 2> pa{0, 1}, pb{0, 2};
  const FlowId a = sharing.add(pa, 2.0, 0.0);
  update(sharing, 0.0);
  // At 1 s port 1 drops to a quarter: a's 1 s of work left takes 4 s.
  sharing.set_capacity(1, 0.25);
  EXPECT_TRUE(sharing.pending());
  auto moved = update(sharing, 1.0);
  EXPECT_DOUBLE_EQ(sharing.rate(a), 0.25);
  EXPECT_DOUBLE_EQ(moved.at(a), 5.0);
  // A second flow on port 0 takes what a leaves of it (max-min).
  const FlowId b = sharing.add(pb, 1.0, 1.0);
  moved = update(sharing, 1.0);
  EXPECT_DOUBLE_EQ(sharing.rate(b), 0.75);
  // A dead port stops its flows: they never end.
  sharing.set_capacity(1, 0.0);
  moved = update(sharing, 2.0);
  EXPECT_DOUBLE_EQ(sharing.rate(a), 0.0);
  EXPECT_EQ(moved.at(a), std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(sharing.rate(b), 1.0);
  EXPECT_THROW(sharing.set_capacity(1, 1.5), std::invalid_argument);
}

TEST(EndpointSharing, ASlowedFlowProgressesAtItsRateOverTheSlowdown) {
  // a and b share port 0 (1/2 each). From 1 s, a is slowed 2x: it keeps its
  // half of the port (b gains nothing) and progresses at 1/4.
  EndpointSharing sharing(2);
  const std::array<PortId, 1> p{0};
  const FlowId a = sharing.add(p, 2.0, 0.0);
  const FlowId b = sharing.add(p, 4.0, 0.0);
  update(sharing, 0.0);
  sharing.set_slowdown(a, 2.0, 1.0);
  EXPECT_TRUE(sharing.pending());
  auto moved = update(sharing, 1.0);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_DOUBLE_EQ(moved.at(a), 1.0 + 1.5 * 4.0);  // 0.5 s of work done, 1.5 s left at 1/4
  EXPECT_DOUBLE_EQ(sharing.rate(b), 0.5);
  // Back to full speed at 3 s: 1 s left at 1/2.
  sharing.set_slowdown(a, 1.0, 3.0);
  moved = update(sharing, 3.0);
  EXPECT_DOUBLE_EQ(moved.at(a), 5.0);
  // A slowdown set in the same instant as a rate change is taken with it.
  const FlowId c = sharing.add(p, 1.0, 3.0);
  sharing.set_slowdown(c, 3.0, 3.0);
  moved = update(sharing, 3.0);
  EXPECT_DOUBLE_EQ(moved.at(c), 3.0 + 1.0 * 3.0 * 3.0);  // a third of the port, at 1/3 of that
  EXPECT_THROW(sharing.set_slowdown(c, 0.5, 3.0), std::invalid_argument);
}

TEST(EndpointSharing, ALatencyIsNotStretchedBySharing) {
  // Two flows of 3 s on one port, 2 s of each latency: the latencies run at
  // full time, the remaining seconds of bytes at half rate each.
  EndpointSharing sharing(1);
  const std::array<PortId, 1> port{0};
  const FlowId a = sharing.add(port, 3.0, 0.0, 2.0);
  const FlowId b = sharing.add(port, 3.0, 0.0, 2.0);
  auto moved = update(sharing, 0.0);
  EXPECT_DOUBLE_EQ(moved.at(a), 4.0);  // 2 + 1 / 0.5
  EXPECT_DOUBLE_EQ(moved.at(b), 4.0);
  // b leaves halfway through a's bytes (at 3): a's last half second of bytes
  // then runs at full rate.
  sharing.remove(b, 3.0);
  moved = update(sharing, 3.0);
  EXPECT_DOUBLE_EQ(moved.at(a), 3.5);
  // A slowdown stretches only the bytes too; a latency past the duration is cut to it.
  const FlowId c = sharing.add(port, 1.0, 10.0, 5.0);
  update(sharing, 10.0);
  sharing.set_slowdown(c, 2.0, 10.0);
  EXPECT_DOUBLE_EQ(update(sharing, 10.0).at(c), 11.0);  // all of it latency: not slowed
}

TEST(EndpointSharing, RatesAreMaxMinFair) {
  // a: {0, 1}; b: {0, 2}; c: {2}; d: {2}. Port 2 holds b, c, d to 1/3; a gets
  // the 2/3 of port 0 that b leaves.
  EndpointSharing sharing(3);
  const std::array<PortId, 2> pa{0, 1}, pb{0, 2};
  const std::array<PortId, 1> pc{2};
  const FlowId a = sharing.add(pa, 1.0, 0.0), b = sharing.add(pb, 1.0, 0.0);
  const FlowId c = sharing.add(pc, 1.0, 0.0), d = sharing.add(pc, 1.0, 0.0);
  const auto moved = update(sharing, 0.0);
  EXPECT_EQ(moved.size(), 4u);
  EXPECT_DOUBLE_EQ(sharing.rate(a), 2.0 / 3.0);
  for (const FlowId f : {b, c, d}) EXPECT_DOUBLE_EQ(sharing.rate(f), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(moved.at(a), 1.5);
}

TEST(EndpointSharing, OnlyTheConnectedFlowsAreRecomputed) {
  EndpointSharing sharing(4);
  const std::array<PortId, 2> left{0, 1}, right{2, 3};
  const FlowId a = sharing.add(left, 1.0, 0.0);
  const FlowId b = sharing.add(right, 1.0, 0.0);
  update(sharing, 0.0);
  const auto version_b = sharing.version(b);
  // A second flow on the left halves a's rate; b, on other ports, is untouched.
  const FlowId c = sharing.add(left, 1.0, 0.5);
  const auto moved = update(sharing, 0.5);
  EXPECT_EQ(moved.size(), 2u);
  EXPECT_DOUBLE_EQ(moved.at(a), 1.5);  // 0.5 left at half speed
  EXPECT_DOUBLE_EQ(moved.at(c), 2.5);  // 1 at half speed until 1.5, then 0.5 alone
  EXPECT_EQ(sharing.version(b), version_b);
  EXPECT_DOUBLE_EQ(sharing.rate(b), 1.0);
  // a ends: c speeds up and ends after its remaining 0.5 at full speed.
  sharing.remove(a, 1.5);
  const auto after = update(sharing, 1.5);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_DOUBLE_EQ(after.at(c), 2.0);
}

// A flow added alone on its ports takes their smallest capacity without a walk
// over them, unless something else reaches it before the update: a flow joining
// one of its ports, or a capacity change there.
TEST(EndpointSharing, AFlowAddedAloneIsRatedUnlessJoinedInTheSameInstant) {
  EndpointSharing sharing(4);
  const std::array<PortId, 2> pa{0, 1}, pb{1, 2};
  sharing.set_capacity(0, 0.5);
  update(sharing, 0.0);
  const FlowId a = sharing.add(pa, 1.0, 0.0);
  EXPECT_TRUE(sharing.pending());
  auto moved = update(sharing, 0.0);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_DOUBLE_EQ(moved.at(a), 2.0);  // at port 0's half capacity
  sharing.remove(a, 2.0);
  // Added alone, then joined at port 1 in the same instant: both share it.
  const FlowId b = sharing.add(pb, 1.0, 2.0);
  const FlowId c = sharing.add(pa, 1.0, 2.0);
  moved = update(sharing, 2.0);
  EXPECT_DOUBLE_EQ(sharing.rate(b), 0.5);
  EXPECT_DOUBLE_EQ(sharing.rate(c), 0.5);
  EXPECT_DOUBLE_EQ(moved.at(b), 4.0);
  EXPECT_DOUBLE_EQ(moved.at(c), 4.0);
  // Added alone, then its port's capacity drops in the same instant.
  const FlowId d = sharing.add(std::array<PortId, 1>{3}, 1.0, 2.0);
  sharing.set_capacity(3, 0.25);
  moved = update(sharing, 2.0);
  EXPECT_DOUBLE_EQ(moved.at(d), 6.0);
  EXPECT_DOUBLE_EQ(sharing.rate(d), 0.25);
}

// Removing a flow leaves a rate to recompute only where another flow still
// runs: a port left empty is not dirty.
TEST(EndpointSharing, ARemovalOnlyDirtiesPortsOthersStillUse) {
  EndpointSharing sharing(3);
  const std::array<PortId, 2> pa{0, 1}, pb{1, 2};
  const FlowId a = sharing.add(pa, 2.0, 0.0);
  update(sharing, 0.0);
  sharing.remove(a, 2.0);
  EXPECT_FALSE(sharing.pending());
  EXPECT_TRUE(update(sharing, 2.0).empty());
  // Two flows share port 1 at half speed each; when one ends at 4 s the
  // other, with 1 s of work left, gets it all.
  const FlowId b = sharing.add(pa, 2.0, 2.0);
  const FlowId c = sharing.add(pb, 3.0, 2.0);
  auto moved = update(sharing, 2.0);
  EXPECT_DOUBLE_EQ(moved.at(b), 6.0);
  EXPECT_DOUBLE_EQ(moved.at(c), 8.0);
  sharing.remove(b, 6.0);
  EXPECT_TRUE(sharing.pending());
  moved = update(sharing, 6.0);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_DOUBLE_EQ(moved.at(c), 7.0);
  EXPECT_DOUBLE_EQ(sharing.rate(c), 1.0);
}

TEST(EndpointSharing, AFlowDueNowKeepsItsFinishingTime) {
  // Two flows due at the same instant: removing the first does not move the second.
  EndpointSharing sharing(2);
  const std::array<PortId, 1> p{0};
  const FlowId a = sharing.add(p, 1.0, 0.0), b = sharing.add(p, 1.0, 0.0);
  update(sharing, 0.0);
  const auto version_b = sharing.version(b);
  sharing.remove(a, 2.0);
  EXPECT_TRUE(update(sharing, 2.0).empty());
  EXPECT_EQ(sharing.version(b), version_b);
}

TEST(EndpointSharing, ARemovedFlowsIdIsReusedWithANewVersion) {
  EndpointSharing sharing(2);
  const std::array<PortId, 1> p{0};
  const FlowId a = sharing.add(p, 1.0, 0.0);
  update(sharing, 0.0);
  const auto version = sharing.version(a);
  sharing.remove(a, 1.0);
  const FlowId b = sharing.add(p, 1.0, 1.0);
  EXPECT_EQ(b, a);
  EXPECT_NE(sharing.version(b), version);
  EXPECT_EQ(sharing.active(), 1u);
  sharing.remove(b, 2.0);
  EXPECT_THROW(sharing.remove(b, 2.0), std::logic_error);
}

// Ports holding the same flows share a class: sharing is the same as flows
// come and go, classes split and merge, and a class's slot is taken up by another.
TEST(EndpointSharing, APortSharesAlikeHoweverManyFlowsItHolds) {
  constexpr FlowId kFlows = 9;
  EndpointSharing sharing(2 * kFlows + 1);
  // Flow i uses port 0 and a port of its own, 1 + i; flow 0's own port is at
  // 10%: it gets that, and the others share the rest of port 0.
  sharing.set_capacity(1, 0.1);
  std::vector<FlowId> flows;
  for (FlowId i = 0; i < kFlows; ++i) {
    flows.push_back(sharing.add(std::array<PortId, 2>{0, 1 + i}, 1.0, 0.0));
  }
  update(sharing, 0.0);
  EXPECT_DOUBLE_EQ(sharing.rate(flows[0]), 0.1);
  for (FlowId i = 1; i < kFlows; ++i) EXPECT_DOUBLE_EQ(sharing.rate(flows[i]), 0.9 / (kFlows - 1));
  // Every other flow leaves: the four left share port 0 (flow 0 still held at 10%).
  for (FlowId i = 1; i < kFlows; i += 2) sharing.remove(flows[i], 0.0);
  update(sharing, 0.0);
  EXPECT_EQ(sharing.active(), 5u);
  for (FlowId i = 2; i < kFlows; i += 2) EXPECT_DOUBLE_EQ(sharing.rate(flows[i]), 0.9 / 4);
  // Five flows on port kFlows + 1 while port 0 still holds its five: each
  // port has its own list.
  std::vector<FlowId> others;
  for (PortId i = 0; i < 5; ++i) {
    others.push_back(sharing.add(std::array<PortId, 2>{kFlows + 1, kFlows + 2 + i}, 1.0, 0.0));
  }
  update(sharing, 0.0);
  for (const FlowId f : others) EXPECT_DOUBLE_EQ(sharing.rate(f), 0.2);
  EXPECT_DOUBLE_EQ(sharing.rate(flows[2]), 0.9 / 4);
  // Port 0 empties; a flow added there later runs alone at full speed.
  for (FlowId i = 0; i < kFlows; i += 2) sharing.remove(flows[i], 0.0);
  update(sharing, 0.0);
  const FlowId last = sharing.add(std::array<PortId, 1>{0}, 1.0, 1.0);
  const auto moved = update(sharing, 1.0);
  EXPECT_DOUBLE_EQ(moved.at(last), 2.0);
  for (const FlowId f : others) EXPECT_DOUBLE_EQ(sharing.rate(f), 0.2);
}

// Max-min rates computed port by port, the textbook way: every round, the
// ports offering the smallest share to their unfrozen flows freeze them at it.
std::map<FlowId, double> max_min_rates(const std::map<FlowId, std::vector<PortId>>& flows,
                                       const std::vector<double>& capacities) {
  std::vector<double> left = capacities;
  std::map<FlowId, double> rates;
  while (rates.size() < flows.size()) {
    std::vector<int> unfrozen(capacities.size(), 0);
    for (const auto& [f, ports] : flows) {
      if (rates.count(f) == 0) {
        for (const PortId p : ports) ++unfrozen[p];
      }
    }
    double share = std::numeric_limits<double>::infinity();
    for (std::size_t p = 0; p < left.size(); ++p) {
      if (unfrozen[p] > 0) share = std::min(share, left[p] / unfrozen[p]);
    }
    std::vector<PortId> bottlenecks;
    for (std::size_t p = 0; p < left.size(); ++p) {
      if (unfrozen[p] > 0 && left[p] / unfrozen[p] == share) bottlenecks.push_back(static_cast<PortId>(p));
    }
    for (const PortId b : bottlenecks) {
      for (const auto& [f, ports] : flows) {
        if (rates.count(f) != 0 || std::find(ports.begin(), ports.end(), b) == ports.end()) continue;
        rates[f] = std::clamp(share, 0.0, 1.0);
        for (const PortId p : ports) left[p] -= rates[f];
      }
    }
  }
  return rates;
}

// Random flows over a few ports, added and removed in batches, some over the
// same ports as others, some over most ports (as a collective over every
// rank is), with capacities changing: after each update every flow has the
// rate a port-by-port filling gives it, and every flow whose rate changed
// was reported.
TEST(EndpointSharing, RatesMatchAPortByPortFillingAsFlowsComeAndGo) {
  constexpr PortId kPorts = 12;
  std::mt19937 random(20261128);
  EndpointSharing sharing(kPorts);
  std::map<FlowId, std::vector<PortId>> flows;
  std::vector<double> capacities(kPorts, 1.0);
  const std::vector<double> kCapacities{1.0, 1.0, 0.5, 0.25, 0.0};
  std::map<FlowId, double> rates;
  for (int step = 0; step < 400; ++step) {
    const int changes = 1 + static_cast<int>(random() % 4);
    for (int c = 0; c < changes; ++c) {
      const unsigned action = random() % 10;
      if (action < 5 || flows.empty()) {
        std::vector<PortId> ports;
        if (action == 0 && !flows.empty()) {
          ports = std::next(flows.begin(), static_cast<long>(random() % flows.size()))->second;  // the same ports as another
        } else {
          std::vector<PortId> all(kPorts);
          for (PortId p = 0; p < kPorts; ++p) all[p] = p;
          std::shuffle(all.begin(), all.end(), random);
          const std::size_t size = action == 1 ? kPorts - random() % 3 : 1 + random() % 4;
          ports.assign(all.begin(), all.begin() + static_cast<long>(size));
        }
        const FlowId f = sharing.add(ports, 1e9, 0.0);
        ASSERT_EQ(flows.count(f), 0u);
        flows[f] = ports;
      } else if (action < 9) {
        const auto it = std::next(flows.begin(), static_cast<long>(random() % flows.size()));
        sharing.remove(it->first, 0.0);
        rates.erase(it->first);
        flows.erase(it);
      } else {
        const PortId p = random() % kPorts;
        capacities[p] = kCapacities[random() % kCapacities.size()];
        sharing.set_capacity(p, capacities[p]);
      }
    }
    const auto moved = update(sharing, 0.0);
    const auto expected = max_min_rates(flows, capacities);
    ASSERT_EQ(sharing.active(), flows.size());
    for (const auto& [f, rate] : expected) {
      ASSERT_NEAR(sharing.rate(f), rate, 1e-12) << "flow " << f << " at step " << step;
      // (A flow added on a dead port stays at rate 0 and is not reported.)
      const auto before = rates.find(f);
      if (before == rates.end() ? rate != 0.0 : before->second != rate) {
        ASSERT_EQ(moved.count(f), 1u) << "flow " << f << " changed rate unreported at step " << step;
      }
    }
    rates = expected;
  }
}

TEST(EndpointSharing, BadPortsAreRejected) {
  EndpointSharing sharing(2);
  const std::array<PortId, 1> far{2};
  EXPECT_THROW(sharing.add(far, 1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(sharing.add({}, 1.0, 0.0), std::invalid_argument);
}

}  // namespace
}  // namespace eppsim
