#pragma once
// Small messages with content in every field kind, shared by the tests of every layer.
#include <cstdint>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "proto/calibration.pb.h"
#include "schedule/program_ops.h"
#include "proto/report.pb.h"
#include "proto/scenario.pb.h"
#include "proto/schedule.pb.h"
#include "proto/trace.pb.h"
#include "schedule/trace_events.h"

namespace eppsim::testing {

// A fresh empty directory for one test.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "eppsim_traces_tests" /
                              (std::string(info->test_suite_name()) + "." + info->name() + "." + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline proto::Calibration sample_calibration() {
  proto::Calibration c;
  c.set_gpu("A100-80GB");
  c.set_model("llama2-7b");
  c.mutable_forward()->set_alpha1_s_per_token2(1.25e-12);
  c.mutable_forward()->set_alpha2_s_per_token(3.5e-7);
  c.mutable_forward()->set_beta_s(2e-5);
  c.mutable_backward()->set_alpha1_s_per_token2(2.5e-12);
  c.mutable_backward()->set_alpha2_s_per_token(7e-7);
  auto* fit = c.add_collectives();
  fit->set_kind("all-reduce");
  fit->set_group_size(8);
  fit->set_crosses_nodes(true);
  fit->set_latency_s(1.5e-5);
  fit->set_bandwidth_bps(2.2e10);
  return c;
}

inline proto::Scenario sample_scenario() {
  proto::Scenario s;
  s.set_name("sample \"quoted\" \xc3\xa9");
  s.set_description("line one\nline two");
  s.set_seed(42);
  s.mutable_model()->set_preset("llama2-7b");
  s.mutable_model()->set_ffn_kind(proto::GELU);
  s.mutable_cluster()->set_nodes(2);
  s.mutable_cluster()->set_gpus_per_node(8);
  s.mutable_cluster()->mutable_gpu()->set_preset("A100-80GB");
  s.mutable_cluster()->mutable_intra_node()->set_bandwidth("300GB/s");
  s.mutable_cluster()->mutable_intra_node()->set_latency("2us");
  s.mutable_cluster()->mutable_inter_node()->set_bandwidth("200Gbps");
  s.mutable_cluster()->mutable_inter_node()->set_latency("5us");
  s.mutable_workload()->mutable_lengths()->set_fixed(4096);
  s.mutable_workload()->set_global_batch(64);
  s.mutable_workload()->set_max_length(8192);
  s.mutable_workload()->set_over_max_length(proto::DROP);
  s.mutable_plan()->set_strategy("packed-1f1b");
  s.mutable_plan()->set_memory_fraction(0.9);
  s.mutable_plan()->mutable_packed_1f1b()->set_pipeline_stages(4);
  s.mutable_plan()->mutable_packed_1f1b()->set_micro_batch_tokens(8192);
  *s.mutable_cost_model()->mutable_calibration() = sample_calibration();
  s.mutable_simulation()->set_engine("analytic");
  return s;
}

inline proto::Schedule sample_schedule() {
  proto::Schedule s;
  s.set_scenario("sample");
  s.set_strategy("packed-1f1b");
  s.set_num_ranks(2);
  for (std::uint32_t r = 0; r < 2; ++r) {
    auto* p = s.add_placement();
    p->set_node(0);
    p->set_local_gpu(r);
  }
  auto* g = s.add_groups();
  g->set_id(0);
  g->set_name("dp");
  g->add_ranks(0);
  g->add_ranks(1);
  s.add_stream_names("compute");
  s.add_stream_names("comm");
  // Rank 0's ops in columns (schema version 5), rank 1's as a message each (the
  // form older files hold), so that both forms go through every format.
  auto* c = s.add_shared_computes();
  c->set_phase(proto::FORWARD);
  c->set_stage(0);
  c->set_chunk(3);
  c->set_layer_count(16);
  c->add_segment_tokens(1024);
  c->add_segment_context_tokens(512);
  c->set_flops(1.5e12);
  c->set_memory_traffic_bytes(123456789);
  c->set_estimated_duration_ns(-7);
  auto& program = *s.add_programs();
  add_op(program, OpFields::compute(0, 0));
  const std::uint32_t send_deps[] = {0};
  add_op(program, OpFields::send(1, 1, 1 << 20, 9).fixed(-3), send_deps);
  add_op(program, OpFields::collective(1, proto::ALL_REDUCE, 0, std::uint64_t{1} << 40, proto::RING));
  add_op(program, OpFields::memory(0, true, 4096, proto::ACTIVATIONS));
  auto* op = s.add_programs()->add_ops();
  op->add_deps(2);
  op->mutable_recv()->set_peer(0);
  s.mutable_summary()->set_sequences(12);
  s.mutable_summary()->set_tokens(UINT64_C(18446744073709551615));
  s.mutable_summary()->set_model_flops(6.02e23);
  s.mutable_summary()->add_planned_peak_memory_bytes(1);
  s.mutable_summary()->add_planned_peak_memory_bytes(2);
  return s;
}

// Two ranks, two streams: forward and backward compute, a send, a receive, an
// all-reduce, a memory op; and memory samples.
inline proto::Trace sample_trace() {
  proto::Trace t;
  t.set_scenario("sample");
  t.set_strategy("packed-1f1b");
  t.set_engine("analytic");
  t.set_num_ranks(2);
  t.add_stream_names("compute");
  t.add_stream_names("comm");
  auto& events = *t.mutable_op_events();
  add_event(events, {.rank = 0, .op = 0, .stream = 0, .kind = proto::COMPUTE, .phase = proto::FORWARD, .chunk = 3,
                     .stage = 1, .start_ns = 0, .end_ns = 1500});  // 1.5 us
  add_event(events, {.rank = 0, .op = 1, .stream = 1, .kind = proto::SEND, .peer = 1, .size_bytes = 1 << 20,
                     .start_ns = 1500, .end_ns = 2750});
  add_event(events, {.rank = 1, .op = 0, .stream = 1, .kind = proto::RECV, .peer = 0, .size_bytes = 1 << 20,
                     .start_ns = 1000, .end_ns = 2750});
  add_event(events, {.rank = 1, .op = 1, .stream = 0, .kind = proto::COMPUTE, .phase = proto::BACKWARD, .chunk = 3,
                     .stage = 2, .start_ns = 2750, .end_ns = 1'000'002'750});
  add_event(events, {.rank = 0, .op = 2, .stream = 1, .kind = proto::COLLECTIVE, .collective = proto::ALL_REDUCE,
                     .group = 2, .size_bytes = UINT64_C(1) << 33, .start_ns = 3000, .end_ns = 4000});
  add_event(events, {.rank = 1, .op = 2, .stream = 0, .kind = proto::MEMORY, .size_bytes = 4096, .start_ns = 5000,
                     .end_ns = 5000});
  auto sample = [&](std::uint32_t rank, std::int64_t time, std::uint64_t bytes) {
    auto* m = t.add_memory();
    m->set_rank(rank);
    m->set_time_ns(time);
    m->set_bytes(bytes);
  };
  sample(0, 0, 1000);
  sample(0, 1500, 81'000'000'000);
  sample(1, 5000, 4096);
  t.set_step_time_ns(1'000'002'750);
  t.set_memory_limit_bytes(UINT64_C(85899345920));
  return t;
}

inline proto::Report sample_report() {
  proto::Report r;
  r.set_scenario("sample");
  r.set_strategy("packed-1f1b");
  r.set_engine("analytic");
  r.set_ranks(2);
  r.set_step_time_s(1.000002750);
  r.set_tokens_per_s(123456.789);
  r.set_mfu(0.4321);
  r.add_peak_memory_bytes(81e9);
  r.add_peak_memory_bytes(4096);
  r.set_memory_limit_bytes(85899345920.0);
  r.mutable_breakdown_s()->set_compute(0.5);
  r.mutable_breakdown_s()->set_bubble(0.25);
  r.set_eppsim_version("0.1.0");
  r.set_tokens(1e6);
  r.set_sequences(100);
  r.set_seed(7);
  for (std::uint32_t rank = 0; rank < 2; ++rank) {
    auto* p = r.add_per_rank();
    p->set_rank(rank);
    p->set_node(rank / 8);
    p->mutable_breakdown_s()->set_compute(0.5 + rank);
    p->mutable_breakdown_s()->set_recompute(0.125);
    p->mutable_breakdown_s()->set_communication(1e-9);
    p->mutable_breakdown_s()->set_bubble(1.0 / 3.0);
    p->set_peak_memory_bytes(rank == 0 ? 81e9 : 4096);
  }
  return r;
}

}  // namespace eppsim::testing
