#include "models/topology/node_fabric.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/models/topology/route_check.h"

namespace eppsim {
namespace {

// Nodes with their fabric and nothing else, so BFS distances are intra-node.
class FabricOnly final : public Topology {
 public:
  FabricOnly(std::uint32_t nodes, std::uint32_t chips_per_node, const NodeFabricConfig& config)
      : Topology("fabric", nodes, chips_per_node) {
    fabric_.build(*this, config);
    finalize();
  }
  std::string kind() const override { return "fabric"; }
  void route(VertexId src, VertexId dst, std::uint64_t, std::vector<LinkId>* path) const override {
    path->clear();
    ASSERT_TRUE(fabric_.route(*this, src, dst, path));
  }
  BytesPerSecond injection_bandwidth_per_chip() const override { return {}; }
  BytesPerSecond bisection_bandwidth() const override { return {}; }
  const NodeFabric& fabric() const { return fabric_; }

 private:
  NodeFabric fabric_;
};

NodeFabricConfig fabric(NodeFabricKind kind, std::vector<std::uint32_t> dims = {}) {
  NodeFabricConfig c;
  c.kind = kind;
  c.dims = std::move(dims);
  c.link = {BytesPerSecond(100e9), Seconds(1e-7)};
  return c;
}

// Every pair inside each node: a shortest walk with hops() hops.
void check_nodes(const FabricOnly& t) {
  ShortestPathRouter bfs(t);
  std::vector<LinkId> path;
  for (VertexId a = 0; a < t.chips(); ++a) {
    const auto dist = bfs.distances(a);
    for (VertexId b = 0; b < t.chips(); ++b) {
      if (t.node_of(a) != t.node_of(b)) continue;
      t.route(a, b, 0, &path);
      ASSERT_EQ(testing::check_walk(t, a, b, path), "");
      ASSERT_EQ(path.size(), dist[b]) << a << "->" << b;
      ASSERT_EQ(path.size(), t.fabric().hops(a % t.chips_per_node(), b % t.chips_per_node()));
      for (auto id : path) {
        ASSERT_TRUE(t.link(id).intra_node);
        ASSERT_EQ(t.link(id).medium, LinkMedium::Electrical);
      }
    }
  }
}

TEST(NodeFabric, SwitchedNodes) {
  FabricOnly t(3, 8, fabric(NodeFabricKind::Switched));
  EXPECT_EQ(t.vertices_of_kind(VertexKind::NodeSwitch), 3u);
  EXPECT_EQ(t.links().size(), 24u);
  EXPECT_EQ(t.vertex_name(t.fabric().node_switch(2)), "nodeswitch2");
  check_nodes(t);
}

TEST(NodeFabric, MeshNodes) {
  FabricOnly t(2, 12, fabric(NodeFabricKind::Mesh, {4, 3}));
  EXPECT_EQ(t.fabric().links_per_node(), 3u * 3 + 4u * 2);
  EXPECT_EQ(t.links().size(), 2u * 17);
  check_nodes(t);
  FabricOnly cube(1, 8, fabric(NodeFabricKind::Mesh, {2, 2, 2}));
  EXPECT_EQ(cube.links().size(), 12u);
  check_nodes(cube);
}

TEST(NodeFabric, TorusNodes) {
  FabricOnly t(2, 16, fabric(NodeFabricKind::Torus, {4, 4}));
  EXPECT_EQ(t.fabric().links_per_node(), 32u);
  check_nodes(t);
  FabricOnly odd(1, 15, fabric(NodeFabricKind::Torus, {5, 3}));
  check_nodes(odd);
  FabricOnly two(1, 4, fabric(NodeFabricKind::Torus, {2, 2}));
  EXPECT_EQ(two.links().size(), 8u);  // direct + wrap-around per pair
  check_nodes(two);
}

TEST(NodeFabric, BadGrids) {
  auto config = [](NodeFabricConfig f) {
    TopologyConfig c;
    c.name = "bad";
    c.nodes = 2;
    c.chips_per_node = 8;
    c.node = std::move(f);
    c.network = SimpleNetworkConfig{{BytesPerSecond(1e9), Seconds(1e-6)}};
    return c;
  };
  try {
    build_topology(config(fabric(NodeFabricKind::Mesh, {3, 3})));
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("topology 'bad': node.dims: [3, 3] holds 9 chips, but a node has 8"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(build_topology(config(fabric(NodeFabricKind::Torus, {}))), InputError);
  auto no_bw = fabric(NodeFabricKind::Switched);
  no_bw.link.bandwidth = BytesPerSecond(0);
  EXPECT_THROW(build_topology(config(no_bw)), InputError);
}

}  // namespace
}  // namespace eppsim
