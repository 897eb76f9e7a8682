#include "models/topology/network_cost.h"

namespace eppsim {
namespace {

// The default price table, US dollars per part, for 800G-class parts (100 GB/s
// per direction; the RailX study's 112.5 GB/s links are priced as the same
// class). Sources: the RailX reference notes (cost template), which quote a vendor
// blog (https://luxoptx.com/blogs/news/800g-optical-module-cost-analysis-tco-optimization-for-ai-data-centers).
//
// electrical_switch_port: a 64-port 800G packet switch lists at $150-250K,
//   $2.3-3.9K a port; we take $200K / 64 = $3,125.
// fibre: MPO fibre $50-150 a cable; we take the low end, $50, at volume.
// copper_link: a short DAC or backplane link, $50. (On-board traces inside a
//   node cost less still; the figure is small against any optics.)
// transceiver: 800G OSFP DR8 lists at $1,100-1,400 and linear-drive (LPO)
//   modules at $700-900. At the volume of a 100K-chip build we take LPO at
//   $600, a step below the listed range: see the calibration below.
// optical_switch_port: no public price exists (railx.md 4.2: "a free
//   parameter, hundreds of $ per port is a common assumption"). We calibrate
//   it so that RailX at the paper's headline point, 200K chips x 1.8 TB/s,
//   costs about $1.3B, the paper's own figure:
//
//   scenarios/railx_200k.textproto: 79 x 79 nodes of 32 chips = 199,712 chips,
//   8 OCS-facing 112.5 GB/s ports per chip (4 along rows, 4 along columns):
//   900 GB/s per direction = 1.8 TB/s bidirectional per chip. Each port ends
//   one circuit, so 199,712 * 8 / 2 = 798,848 optical circuits, each with
//   2 transceivers and 1 fibre, and 2 OCS ports; plus 199,712 copper links
//   from the chips to their node switch. Taking 2 OCS ports per circuit,
//     798,848 * (2 * $600 + $50 + 2 * P_ocs) + 199,712 * $50 = $1.30B
//     => 1,250 + 2 P_ocs = (1.30e9 - 9.99e6) / 798,848 = 1,614.8
//     => P_ocs = $182; we take $180. (With LPO at its listed $700, P_ocs
//     would be $82; at $800 nothing would be left for the OCS. $600 leaves
//     "hundreds of $" per OCS port, the common assumption.)
//   The RailX builder installs whole 300-port OCSes: a row's 64 rails of 79
//   circuits need 10,112 ports, 34 OCSes = 10,200, so 158 rows and columns
//   hold 1,611,600 ports (+0.9%), and the total is
//     798,848 * $1,250 + 1,611,600 * $180 + 199,712 * $50
//     = $998.6M + $290.1M + $10.0M = $1.2986B (~$6.5K per chip).
//   Switch ports and fibre come from the quoted ranges. The transceiver sits
//   just below LPO's listed range; a dearer one would raise the fat-tree (8
//   transceivers per endpoint port at 4 levels) more than RailX (2 per port),
//   so the choice is conservative for RailX's ratios.
//
// With these prices a non-blocking fat-tree of the same 1.6M 800G-class
// endpoint ports needs 4 levels of 64-port switches (2 * 32^3 = 65,536 <
// 1.6M <= 2 * 32^4): per port 7 switch ports and 4 optical links,
// 7 * 3,125 + 4 * (2 * 600 + 50) = $26,875, $42.9B in all; RailX costs 3.0%
// of it per unit of injection bandwidth and 12.8% per unit of bisection
// bandwidth (the paper: under 10% and under 50%).
constexpr NetworkPrices kDefaultPrices{
    .transceiver_usd = 600.0,
    .fibre_usd = 50.0,
    .electrical_switch_port_usd = 3125.0,
    .optical_switch_port_usd = 180.0,
    .copper_link_usd = 50.0,
};

}  // namespace

NetworkPrices default_network_prices() { return kDefaultPrices; }

double network_cost_usd(const NetworkInventory& inventory, const NetworkPrices& prices) {
  const auto count = [](std::uint64_t n) { return static_cast<double>(n); };
  return count(inventory.electrical_links) * prices.copper_link_usd +
         count(inventory.optical_links + inventory.optical_circuits) * (2.0 * prices.transceiver_usd + prices.fibre_usd) +
         count(inventory.electrical_switch_ports) * prices.electrical_switch_port_usd +
         count(inventory.optical_switch_ports) * prices.optical_switch_port_usd;
}

}  // namespace eppsim
