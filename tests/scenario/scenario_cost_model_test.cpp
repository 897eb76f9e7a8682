// The scenario's cost_model block (scenario/scenario_cost_model.cpp): compute and
// network implementations, calibrations inline and from files, interference,
// shaped compute.
#include "scenario/cost_model_factory.h"
#include "scenario/scenario.h"

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "models/flexsp_preset.h"
#include "base/proto_io.h"
#include "tests/schedule/sample_messages.h"
#include "tests/scenario/scenario_file_fixture.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
using testing::kBase;
using testing::replaced;
using testing::ScenarioFile;

TEST_F(ScenarioFile, CostModel) {
  const std::string calibrated = std::string(kBase) +
                                 "cost_model {\n  calibration {\n    forward { alpha1_s_per_token2: 1e-12 beta_s: 1e-5 }\n"
                                 "    backward { alpha2_s_per_token: 2e-7 }\n  }\n}\n";
  const ResolvedScenario r = load(calibrated);
  EXPECT_NE(dynamic_cast<const CalibratedComputeCost*>(r.cost.compute.get()), nullptr);
  EXPECT_THAT(error_of(replaced(calibrated, "beta_s: 1e-5", "beta_s: -1")),
              HasSubstr(":22: cost_model.calibration.forward.beta_s: must be finite and >= 0, got -1"));
  EXPECT_THAT(error_of(replaced(calibrated, "backward { alpha2_s_per_token: 2e-7 }", "backward { }")),
              HasSubstr(":23: cost_model.calibration.backward: needs at least one positive coefficient"));
  EXPECT_THAT(error_of(std::string(kBase) + "cost_model { gemm_efficiency: 1.5 }\n"),
              HasSubstr(":20: cost_model.gemm_efficiency: must be in (0, 1] (0 means the default 0.75), got 1.5"));
  EXPECT_NE(dynamic_cast<const AnalyticComputeCost*>(
                load(std::string(kBase) + "cost_model { compute: ROOFLINE attention_efficiency: 0.4 }\n").cost.compute.get()),
            nullptr);
}

TEST_F(ScenarioFile, KernelFitsComeInPairsAndChangeThePrice) {
  const std::string calibrated = std::string(kBase) +
                                 "cost_model {\n  calibration {\n    forward { alpha2_s_per_token: 1e-7 beta_s: 1e-5 }\n"
                                 "    backward { alpha2_s_per_token: 2e-7 }\n"
                                 "    forward_head { alpha2_s_per_token: 3e-6 }\n"
                                 "    backward_head { alpha2_s_per_token: 6e-6 }\n  }\n}\n";
  const std::vector<Segment> segments = {Segment{1000, 0}};
  ChunkWork chunk;
  chunk.segments = segments;
  chunk.layer_count = 1;
  chunk.includes_lm_head = true;
  ChunkWork layers = chunk;
  layers.includes_lm_head = false;
  const ResolvedScenario r = load(calibrated);
  EXPECT_NEAR(r.cost.compute->cost({Pass::Backward, chunk}).time.value -
                  r.cost.compute->cost({Pass::Backward, layers}).time.value,
              6e-3, 1e-12);
  EXPECT_THAT(error_of(replaced(calibrated, "    backward_head { alpha2_s_per_token: 6e-6 }\n", "")),
              HasSubstr("cost_model.calibration.backward_head: is missing: the LM head's fits come in pairs"));
  EXPECT_THAT(error_of(replaced(calibrated, "forward_head { alpha2_s_per_token: 3e-6 }",
                                "forward_attention { alpha1_s_per_token2: -1 }")),
              HasSubstr("cost_model.calibration.forward_head: is missing: the LM head's fits come in pairs"));
  EXPECT_THAT(error_of(replaced(calibrated, "    forward_head { alpha2_s_per_token: 3e-6 }\n    backward_head { alpha2_s_per_token: 6e-6 }\n",
                                "    forward_attention { alpha1_s_per_token2: 1e-12 }\n    backward_attention { }\n")),
              HasSubstr("cost_model.calibration.backward_attention: needs at least one positive coefficient"));
}

TEST_F(ScenarioFile, CalibrationFileResolvesAgainstTheScenariosFolder) {
  proto::Calibration calibration = testing::sample_calibration();
  write_message(calibration, dir_ / "calibrations" / "a100.textproto");
  write_message(calibration, dir_ / "calibrations" / "a100.json");
  const std::string named = std::string(kBase) + "cost_model { calibration_file: \"calibrations/a100.textproto\" }\n";
  const ResolvedScenario r = load(named);
  EXPECT_NE(dynamic_cast<const CalibratedComputeCost*>(r.cost.compute.get()), nullptr);
  ASSERT_EQ(r.cost.ingredients->comm_fits.size(), 1u);
  EXPECT_EQ(r.cost.ingredients->comm_fits[0].kind, CommKind::AllReduce);
  EXPECT_EQ(r.cost.ingredients->comm_fits[0].group_size, 8u);
  EXPECT_TRUE(r.cost.ingredients->comm_fits[0].crosses_nodes);
  EXPECT_DOUBLE_EQ(r.cost.ingredients->comm_fits[0].bus_bandwidth.value, 2.2e10);
  // Any format, an absolute path, or a --set override (still relative to the scenario's folder).
  EXPECT_EQ(load(replaced(named, "a100.textproto", "a100.json")).cost.ingredients->comm_fits.size(), 1u);
  EXPECT_EQ(load(replaced(named, "calibrations/a100.textproto", (dir_ / "calibrations" / "a100.textproto").string()))
                .cost.ingredients->comm_fits.size(),
            1u);
  EXPECT_EQ(load(kBase, {"cost_model.calibration_file=calibrations/a100.json"}).cost.ingredients->comm_fits.size(), 1u);

  // Errors name the scenario file, the field and the calibration file.
  EXPECT_EQ(error_of(replaced(named, "a100.textproto", "missing.textproto")),
            file() + ":20: cost_model.calibration_file: no such file " +
                (dir_ / "calibrations" / "missing.textproto").string() + " (relative paths resolve against " +
                dir_.string() + ")");
  EXPECT_THAT(error_of(kBase, {"cost_model.calibration_file=none.pb"}),
              HasSubstr("cost_model.calibration_file: no such file " + (dir_ / "none.pb").string()));
  EXPECT_THAT(error_of(std::string(kBase) +
                       "cost_model {\n  calibration_file: \"calibrations/a100.json\"\n  calibration { forward { beta_s: 1 } }\n}\n"),
              HasSubstr(":21: cost_model.calibration_file: set either calibration_file or an inline calibration, not both"));
  write_file_atomically(dir_ / "calibrations" / "broken.textproto", "forward { beta_z: 1 }\n");
  const std::string broken = error_of(replaced(named, "a100.textproto", "broken.textproto"));
  EXPECT_THAT(broken, HasSubstr(file() + ":20: cost_model.calibration_file: "));
  EXPECT_THAT(broken, HasSubstr((dir_ / "calibrations" / "broken.textproto").string() + ":1:"));
  EXPECT_THAT(broken, HasSubstr("beta_z"));
  const std::string bad_file = (dir_ / "calibrations" / "bad.textproto").string();
  calibration.mutable_forward()->set_beta_s(-1);
  write_message(calibration, bad_file);
  EXPECT_EQ(error_of(replaced(named, "a100.textproto", "bad.textproto")),
            file() + ":20: cost_model.calibration_file: " + bad_file + ": forward.beta_s: must be finite and >= 0, got -1");
  calibration = testing::sample_calibration();
  calibration.mutable_collectives(0)->set_kind("allreduce");
  write_message(calibration, bad_file);
  EXPECT_THAT(error_of(replaced(named, "a100.textproto", "bad.textproto")),
              HasSubstr(bad_file + ": collectives[0].kind: unknown kind \"allreduce\" (known: send-recv, all-reduce"));
  calibration = testing::sample_calibration();
  *calibration.add_collectives() = calibration.collectives(0);
  write_message(calibration, bad_file);
  EXPECT_THAT(error_of(replaced(named, "a100.textproto", "bad.textproto")),
              HasSubstr(bad_file + ": collectives[1]: a second all-reduce fit over 8 ranks with crosses_nodes true"));
  write_file_atomically(dir_ / "calibrations" / "a100.yaml", "");
  EXPECT_THAT(error_of(replaced(named, "a100.textproto", "a100.yaml")), HasSubstr(":20: cost_model.calibration_file: "));
}

TEST_F(ScenarioFile, InlineCollectiveFitsAreChecked) {
  const std::string inline_fit = std::string(kBase) +
                                 "cost_model {\n  calibration {\n    collectives { kind: \"all-to-all\" group_size: 4 "
                                 "latency_s: 1e-5 bandwidth_Bps: 1e10 }\n  }\n}\n";
  const ResolvedScenario r = load(inline_fit);
  // Collective fits alone leave compute to the default model (SHAPED).
  EXPECT_NE(dynamic_cast<const ShapedComputeCost*>(r.cost.compute.get()), nullptr);
  ASSERT_EQ(r.cost.ingredients->comm_fits.size(), 1u);
  EXPECT_EQ(r.cost.ingredients->comm_fits[0].kind, CommKind::AllToAll);
  EXPECT_THAT(error_of(replaced(inline_fit, "bandwidth_Bps: 1e10", "bandwidth_Bps: 0")),
              HasSubstr(":21: cost_model.calibration.collectives[0].bandwidth_Bps: must be finite and > 0, got 0"));
  EXPECT_THAT(error_of(replaced(inline_fit, "latency_s: 1e-5", "latency_s: -1e-5")),
              HasSubstr("cost_model.calibration.collectives[0].latency_s: must be finite and >= 0, got -1e-05"));
  EXPECT_THAT(error_of(replaced(inline_fit, "group_size: 4", "group_size: 1")),
              HasSubstr("cost_model.calibration.collectives[0].group_size: must be >= 2, got 1"));
  EXPECT_THAT(error_of(replaced(inline_fit, "\"all-to-all\" group_size: 4", "\"send-recv\" group_size: 4")),
              HasSubstr("cost_model.calibration.collectives[0].group_size: must be 2 for send-recv, got 4"));
}

TEST_F(ScenarioFile, InterferenceFactorsComeFromTheScenarioTheCalibrationOrTheDefaults) {
  // On by default, with the published defaults; off when the scenario says so.
  EXPECT_TRUE(load(kBase).cost.interference.enabled);
  EXPECT_DOUBLE_EQ(load(kBase).cost.interference.at(TrafficClass::PointToPoint, 1e6).compute_slowdown,
                   kDefaultInterference[0].compute_slowdown);
  EXPECT_FALSE(load(std::string(kBase) + "cost_model { interference { enabled: false } }\n").cost.interference.enabled);
  const std::string on = std::string(kBase) +
                         "cost_model {\n  interference { enabled: true point_to_point { comm_slowdown: 1.3 } }\n"
                         "  calibration {\n    interference { traffic: \"point-to-point\" compute_slowdown: 1.4 "
                         "comm_slowdown: 1.1 }\n    interference { traffic: \"inter-node-collective\" "
                         "compute_slowdown: 0.9 comm_slowdown: 1.2 }\n  }\n}\n";
  const Interference in = load(on).cost.interference;
  EXPECT_TRUE(in.enabled);
  const InterferenceFactors p2p = in.at(TrafficClass::PointToPoint, 1e6);
  EXPECT_DOUBLE_EQ(p2p.compute_slowdown, 1.4);  // calibrated
  EXPECT_DOUBLE_EQ(p2p.comm_slowdown, 1.3);     // the scenario's, over the calibration's
  const InterferenceFactors inter = in.at(TrafficClass::InterNodeCollective, 1e6);
  EXPECT_DOUBLE_EQ(inter.compute_slowdown, 1.0);  // fitted below 1: counts as 1
  EXPECT_DOUBLE_EQ(inter.comm_slowdown, 1.2);
  const InterferenceFactors intra = in.at(TrafficClass::IntraNodeCollective, 1e6);
  EXPECT_DOUBLE_EQ(intra.compute_slowdown, kDefaultInterference[1].compute_slowdown);
  EXPECT_THAT(error_of(replaced(on, "comm_slowdown: 1.1", "comm_slowdown: 0")),
              HasSubstr("cost_model.calibration.interference[0].comm_slowdown: must be finite and > 0, got 0"));
  EXPECT_THAT(error_of(replaced(on, "\"inter-node-collective\"", "\"point-to-point\"")),
              HasSubstr("cost_model.calibration.interference[1].traffic: a second fit of point-to-point"));
  EXPECT_THAT(error_of(replaced(on, "comm_slowdown: 1.3", "comm_slowdown: 0.7")),
              HasSubstr(":21: cost_model.interference.point_to_point.comm_slowdown: must be finite and >= 1"));
  EXPECT_THAT(error_of(replaced(on, "enabled: true ", "enabled: false ")),
              HasSubstr(":21: cost_model.interference.point_to_point: sets factors while cost_model.interference.enabled "
                        "is false"));
}

// A calibration's points by size become each class's curve; the scenario's
// factor of a direction holds at every size.
TEST_F(ScenarioFile, InterferenceFitsBySizeGiveFactorsPerSize) {
  const std::string on = std::string(kBase) +
                         "cost_model {\n  interference { enabled: true point_to_point { comm_slowdown: 1.3 } }\n"
                         "  calibration {\n    interference { traffic: \"point-to-point\" compute_slowdown: 1.4 "
                         "comm_slowdown: 1.1\n      by_size { bytes: 1024 compute_slowdown: 1.0 comm_slowdown: 9 }\n"
                         "      by_size { bytes: 1048576 compute_slowdown: 3.0 comm_slowdown: 0.5 }\n    }\n  }\n}\n";
  const Interference in = load(on).cost.interference;
  EXPECT_DOUBLE_EQ(in.at(TrafficClass::PointToPoint, 1024).compute_slowdown, 1.0);
  EXPECT_DOUBLE_EQ(in.at(TrafficClass::PointToPoint, 32768).compute_slowdown, std::sqrt(3.0));  // halfway in log
  EXPECT_DOUBLE_EQ(in.at(TrafficClass::PointToPoint, 1e9).compute_slowdown, 3.0);
  EXPECT_DOUBLE_EQ(in.at(TrafficClass::PointToPoint, 1024).comm_slowdown, 1.3);  // the scenario's
  EXPECT_THAT(error_of(replaced(on, "bytes: 1048576", "bytes: 1024")),
              HasSubstr("cost_model.calibration.interference[0].by_size[1].bytes: must be above the previous "
                        "point's 1024, got 1024"));
  EXPECT_THAT(error_of(replaced(on, "bytes: 1024 ", "bytes: 0 ")),
              HasSubstr("cost_model.calibration.interference[0].by_size[0].bytes: must be > 0"));
  EXPECT_THAT(error_of(replaced(on, "comm_slowdown: 9", "comm_slowdown: -9")),
              HasSubstr("cost_model.calibration.interference[0].by_size[0].comm_slowdown: must be finite and > 0, "
                        "got -9"));
}

TEST_F(ScenarioFile, CostModelImplementationsAreChosenExplicitly) {
  // Defaults: SHAPED without a calibration, CLOSED_FORM without a topology.
  const ResolvedScenario r = load(kBase);
  EXPECT_NE(dynamic_cast<const ShapedComputeCost*>(r.cost.compute.get()), nullptr);
  EXPECT_EQ(r.cost.ingredients->network_pricing, NetworkPricing::ClosedForm);
  ASSERT_NE(r.cost.model, nullptr);
  const std::string calibration =
      "  calibration {\n    forward { alpha2_s_per_token: 1e-7 }\n    backward { alpha2_s_per_token: 2e-7 }\n  }\n";
  // An explicit ROOFLINE beside a calibration keeps the roofline.
  EXPECT_NE(dynamic_cast<const AnalyticComputeCost*>(
                load(std::string(kBase) + "cost_model {\n  compute: ROOFLINE\n" + calibration + "}\n").cost.compute.get()),
            nullptr);
  EXPECT_NE(dynamic_cast<const CalibratedComputeCost*>(
                load(std::string(kBase) + "cost_model {\n  compute: CALIBRATED\n" + calibration + "}\n").cost.compute.get()),
            nullptr);
  EXPECT_THAT(error_of(std::string(kBase) + "cost_model {\n  compute: CALIBRATED\n}\n"),
              HasSubstr(":21: cost_model.compute: CALIBRATED needs cost_model.calibration"));
  EXPECT_THAT(error_of(std::string(kBase) + "cost_model {\n  network: ROUTED\n}\n"),
              HasSubstr(":21: cost_model.network: ROUTED needs cluster.topology"));
  EXPECT_THAT(error_of(kBase, {"cost_model.network=ROUTED"}),
              HasSubstr("cost_model.network: ROUTED needs cluster.topology (the links to route over); use CLOSED_FORM "
                        "(set by --set cost_model.network=ROUTED)"));
  EXPECT_EQ(load(kBase, {"cost_model.network=CLOSED_FORM"}).cost.ingredients->network_pricing, NetworkPricing::ClosedForm);
  EXPECT_THAT(error_of(std::string(kBase) + "cost_model {\n  compute: 7\n}\n"),
              HasSubstr(":21: cost_model.compute: unknown value 7 (known: ROOFLINE, CALIBRATED, SHAPED)"));
}

TEST_F(ScenarioFile, ShapedComputeTakesTheGpusDefaultsAndTheScenariosValues) {
  const ResolvedScenario r = load(kBase, {"cost_model.compute=SHAPED"});
  ASSERT_NE(dynamic_cast<const ShapedComputeCost*>(r.cost.compute.get()), nullptr);
  ASSERT_TRUE(r.cost.ingredients->shaped_compute.has_value());
  const ShapedComputeParams defaults = default_shaped_params(*find_gpu_preset("A100-80GB"));
  EXPECT_EQ(r.cost.ingredients->shaped_compute->sm_count, 108u);
  EXPECT_EQ(r.cost.ingredients->shaped_compute->kernel_launch, defaults.kernel_launch);
  EXPECT_TRUE(r.cost.ingredients->shaped_compute->fixed_costs);
  EXPECT_TRUE(load(kBase).cost.ingredients->shaped_compute.has_value());  // SHAPED is the default
  EXPECT_FALSE(load(kBase, {"cost_model.compute=ROOFLINE"}).cost.ingredients->shaped_compute.has_value());

  const ResolvedScenario set = load(std::string(kBase) +
                                    "cost_model {\n  compute: SHAPED\n  shaped { fixed_costs: false kernel_launch: \"3us\" "
                                    "layer_overhead: \"0.1ms\" chunk_overhead: \"2ms\" gemm_tile_efficiency: 0.8 "
                                    "attention_efficiency: 0.6 attention_half_length: 1000 }\n}\n");
  ASSERT_TRUE(set.cost.ingredients->shaped_compute.has_value());
  EXPECT_FALSE(set.cost.ingredients->shaped_compute->fixed_costs);
  EXPECT_DOUBLE_EQ(set.cost.ingredients->shaped_compute->kernel_launch.value, 3e-6);
  EXPECT_DOUBLE_EQ(set.cost.ingredients->shaped_compute->layer_overhead.value, 1e-4);
  EXPECT_DOUBLE_EQ(set.cost.ingredients->shaped_compute->chunk_overhead.value, 2e-3);
  EXPECT_DOUBLE_EQ(set.cost.ingredients->shaped_compute->gemm_tile_efficiency, 0.8);
  EXPECT_DOUBLE_EQ(set.cost.ingredients->shaped_compute->attention_efficiency, 0.6);
  EXPECT_DOUBLE_EQ(set.cost.ingredients->shaped_compute->attention_half_length_tokens, 1000.0);

  // A custom GPU takes the SM count and defaults of the preset nearest its peak.
  const std::string custom = replaced(kBase, "gpu { preset: \"A100-80GB\" }",
                                      "gpu { peak_flops: \"1000TFLOPS\" memory: \"80GiB\" memory_bandwidth: \"3TB/s\" "
                                      "nvlink_bandwidth: \"450GB/s\" }");
  EXPECT_EQ(load(custom, {"cost_model.compute=SHAPED"}).cost.ingredients->shaped_compute->sm_count, 132u);

  EXPECT_THAT(error_of(std::string(kBase) + "cost_model {\n  compute: ROOFLINE\n  shaped { fixed_costs: true }\n}\n"),
              HasSubstr(":22: cost_model.shaped: is set, but cost_model.compute is not SHAPED"));
  EXPECT_THAT(error_of(kBase, {"cost_model.compute=SHAPED", "cost_model.shaped.chunk_overhead=-1ms"}),
              HasSubstr("cost_model.shaped.chunk_overhead: invalid duration"));
  EXPECT_DOUBLE_EQ(
      load(kBase, {"cost_model.compute=SHAPED", "cost_model.shaped.attention_efficiency=1"}).cost.ingredients->shaped_compute->attention_efficiency,
      1.0);
}

}  // namespace
}  // namespace eppsim
