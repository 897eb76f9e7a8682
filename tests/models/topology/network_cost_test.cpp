#include "models/topology/network_cost.h"

#include <gtest/gtest.h>

namespace eppsim {
namespace {

TEST(NetworkCost, EmptyInventoryCostsNothing) {
  EXPECT_EQ(network_cost_usd(NetworkInventory{}, default_network_prices()), 0.0);
}

TEST(NetworkCost, EachPartIsPricedByTheFormula) {
  const NetworkPrices prices{.transceiver_usd = 100.0,
                             .fibre_usd = 10.0,
                             .electrical_switch_port_usd = 1000.0,
                             .optical_switch_port_usd = 50.0,
                             .copper_link_usd = 1.0};
  NetworkInventory inv;
  inv.electrical_links = 7;
  EXPECT_DOUBLE_EQ(network_cost_usd(inv, prices), 7.0);
  inv = {};
  inv.optical_links = 3;
  EXPECT_DOUBLE_EQ(network_cost_usd(inv, prices), 3 * (2 * 100.0 + 10.0));
  inv = {};
  inv.optical_circuits = 2;  // optics only; the OCS ports are their own line
  inv.optical_switch_ports = 4;
  EXPECT_DOUBLE_EQ(network_cost_usd(inv, prices), 2 * (2 * 100.0 + 10.0) + 4 * 50.0);
  inv = {};
  inv.electrical_switch_ports = 5;
  inv.electrical_switches = 1;  // switches are priced by their ports
  inv.optical_switches = 9;
  EXPECT_DOUBLE_EQ(network_cost_usd(inv, prices), 5000.0);
}

TEST(NetworkCost, CostIsLinearInTheInventory) {
  const auto prices = default_network_prices();
  NetworkInventory a;
  a.electrical_links = 11;
  a.optical_links = 13;
  a.optical_circuits = 17;
  a.electrical_switch_ports = 19;
  a.optical_switch_ports = 23;
  NetworkInventory twice = a;
  twice.electrical_links *= 2;
  twice.optical_links *= 2;
  twice.optical_circuits *= 2;
  twice.electrical_switch_ports *= 2;
  twice.optical_switch_ports *= 2;
  EXPECT_DOUBLE_EQ(network_cost_usd(twice, prices), 2 * network_cost_usd(a, prices));
}

// The defaults quoted in network_cost.cpp, within their sources' ranges.
TEST(NetworkCost, DefaultsAreThePublishedOnes) {
  const auto p = default_network_prices();
  EXPECT_DOUBLE_EQ(p.transceiver_usd, 600.0);
  EXPECT_DOUBLE_EQ(p.fibre_usd, 50.0);
  EXPECT_DOUBLE_EQ(p.electrical_switch_port_usd, 3125.0);
  EXPECT_DOUBLE_EQ(p.optical_switch_port_usd, 180.0);
  EXPECT_DOUBLE_EQ(p.copper_link_usd, 50.0);
  // A 64-port 800G switch at $150-250K.
  EXPECT_GE(64 * p.electrical_switch_port_usd, 150e3);
  EXPECT_LE(64 * p.electrical_switch_port_usd, 250e3);
}

// The calibration arithmetic of network_cost.cpp: RailX at 199,712 chips with
// 8 circuit ports each comes to about $1.3B.
TEST(NetworkCost, DefaultsPutTheRailXHeadlineAtAboutOnePointThreeBillion) {
  NetworkInventory railx;
  railx.optical_circuits = 199712ull * 8 / 2;
  railx.optical_switch_ports = 2 * railx.optical_circuits;
  railx.electrical_links = 199712;
  const double cost = network_cost_usd(railx, default_network_prices());
  EXPECT_NEAR(cost, 1.3e9, 0.05e9);
  // ~$6.5K of network per chip.
  EXPECT_NEAR(cost / 199712, 6.5e3, 0.2e3);
}

}  // namespace
}  // namespace eppsim
