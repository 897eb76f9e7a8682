#pragma once
// Dollar cost of a network from its inventory and a price table.
//
// cost = electrical_links * copper_link
//      + (optical_links + optical_circuits) * (2 * transceiver + fibre)
//      + electrical_switch_ports * electrical_switch_port
//      + optical_switch_ports * optical_switch_port
// Defaults and their sources are documented next to kDefaultPrices in
// network_cost.cpp.
#include "models/topology/topology.h"

namespace eppsim {

struct NetworkPrices {
  double transceiver_usd = 0.0;
  double fibre_usd = 0.0;
  double electrical_switch_port_usd = 0.0;
  double optical_switch_port_usd = 0.0;
  double copper_link_usd = 0.0;
};

// The documented default price table.
NetworkPrices default_network_prices();

double network_cost_usd(const NetworkInventory& inventory, const NetworkPrices& prices);

}  // namespace eppsim
