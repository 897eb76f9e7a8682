// apply_override (scenario/scenario.h): `--set FIELD=VALUE` on a scenario's
// protobuf, by field path and type, with errors that name the field.
#include <string>
#include <string_view>

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/schedule/sample_messages.h"
#include "scenario/scenario.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

std::string override_error(proto::Scenario* s, std::string_view assignment) {
  try {
    apply_override(s, assignment);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for " << assignment;
  return {};
}

TEST(ApplyOverride, BareAndQuotedStrings) {
  proto::Scenario s = testing::sample_scenario();
  apply_override(&s, "cluster.gpu.preset=H100-SXM");
  EXPECT_EQ(s.cluster().gpu().preset(), "H100-SXM");
  apply_override(&s, "name=\"with spaces\"");
  EXPECT_EQ(s.name(), "with spaces");
  apply_override(&s, "description=a \"b\" \\ c");
  EXPECT_EQ(s.description(), "a \"b\" \\ c");
  apply_override(&s, "cluster.intra_node.bandwidth = 100GB/s ");
  EXPECT_EQ(s.cluster().intra_node().bandwidth(), "100GB/s");
  apply_override(&s, "model.preset=");
  EXPECT_EQ(s.model().preset(), "");
}

TEST(ApplyOverride, NumbersBoolsEnumsReplaceTheOldValue) {
  proto::Scenario s = testing::sample_scenario();
  apply_override(&s, "plan.packed_1f1b.pipeline_stages=8");
  EXPECT_EQ(s.plan().packed_1f1b().pipeline_stages(), 8u);
  EXPECT_EQ(s.plan().packed_1f1b().micro_batch_tokens(), 8192u);  // siblings kept
  apply_override(&s, "plan.packed_1f1b.pipeline_stages=0");
  EXPECT_EQ(s.plan().packed_1f1b().pipeline_stages(), 0u);
  apply_override(&s, "plan.memory_fraction=0.25");
  EXPECT_EQ(s.plan().memory_fraction(), 0.25);
  apply_override(&s, "plan.packed_1f1b.full_recompute=true");
  EXPECT_TRUE(s.plan().packed_1f1b().full_recompute());
  apply_override(&s, "workload.over_max_length=TRUNCATE");
  EXPECT_EQ(s.workload().over_max_length(), proto::TRUNCATE);
  apply_override(&s, "seed=18446744073709551615");
  EXPECT_EQ(s.seed(), UINT64_C(18446744073709551615));
}

TEST(ApplyOverride, OneofMembersSwitchTheSource) {
  proto::Scenario s = testing::sample_scenario();
  apply_override(&s, "workload.lengths.distribution=wikipedia");
  EXPECT_EQ(s.workload().lengths().source_case(), proto::LengthSource::kDistribution);
  apply_override(&s, "workload.lengths.fixed=1024");
  EXPECT_EQ(s.workload().lengths().source_case(), proto::LengthSource::kFixed);
  EXPECT_EQ(s.workload().lengths().fixed(), 1024u);
}

TEST(ApplyOverride, MessagesAreReplacedWhole) {
  proto::Scenario s = testing::sample_scenario();
  apply_override(&s, "cluster.intra_node={bandwidth: \"100GB/s\"}");
  EXPECT_EQ(s.cluster().intra_node().bandwidth(), "100GB/s");
  EXPECT_EQ(s.cluster().intra_node().latency(), "");  // replaced, not merged
  EXPECT_EQ(s.cluster().nodes(), 2u);
}

TEST(ApplyOverride, RepeatedFieldsAreSetWhole) {
  proto::Scenario s = testing::sample_scenario();
  apply_override(&s, "cost_model.calibration.collectives=[{kind: \"a\"}, {kind: \"b\"}]");
  ASSERT_EQ(s.cost_model().calibration().collectives_size(), 2);
  EXPECT_EQ(s.cost_model().calibration().collectives(1).kind(), "b");
  apply_override(&s, "cost_model.calibration.collectives=[]");
  EXPECT_EQ(s.cost_model().calibration().collectives_size(), 0);
  EXPECT_THAT(override_error(&s, "cost_model.calibration.collectives.kind=x"),
              HasSubstr("cost_model.calibration.collectives is a repeated CollectiveFit field"));
}

TEST(ApplyOverride, UnknownComponentsListTheValidFields) {
  proto::Scenario s = testing::sample_scenario();
  EXPECT_EQ(override_error(&s, "plan.packed_1f1b.pipeline_stagez=4"),
            "--set plan.packed_1f1b.pipeline_stagez=4: plan.packed_1f1b has no field 'pipeline_stagez' (fields: "
            "pipeline_stages, micro_batch_tokens, full_recompute, tensor_parallel, context_parallel)");
  EXPECT_THAT(override_error(&s, "clutser.nodes=4"),
              HasSubstr("--set clutser.nodes=4: the scenario has no field 'clutser' (fields: name, description, seed, "
                        "model, cluster,"));
  EXPECT_THAT(override_error(&s, "cluster.nodes.count=4"), HasSubstr("cluster.nodes is a uint32 field and has no field 'count'"));
  EXPECT_THAT(override_error(&s, "cluster..nodes=4"), HasSubstr("cluster has no field ''"));
}

TEST(ApplyOverride, TypeErrorsNameTheFieldAndLeaveTheScenarioAlone) {
  proto::Scenario s = testing::sample_scenario();
  const proto::Scenario before = s;
  const std::string number = override_error(&s, "cluster.nodes=abc");
  EXPECT_THAT(number, HasSubstr("--set cluster.nodes=abc: cluster.nodes (uint32): "));
  EXPECT_THAT(number, HasSubstr("abc"));
  EXPECT_THAT(override_error(&s, "cluster.nodes=-1"), HasSubstr("cluster.nodes (uint32)"));
  EXPECT_THAT(override_error(&s, "workload.over_max_length=drop"), HasSubstr("(values: OVER_MAX_LENGTH_UNSPECIFIED, TRUNCATE, DROP)"));
  EXPECT_THAT(override_error(&s, "cluster.intra_node=fast"), HasSubstr("cluster.intra_node (LinkSpec)"));
  EXPECT_THAT(override_error(&s, "cluster.nodes=1 } seed: 5 #"), HasSubstr("must be a single uint32 value"));
  EXPECT_THAT(override_error(&s, "cluster.nodes"), HasSubstr("expected FIELD=VALUE"));
  EXPECT_THAT(override_error(&s, "=4"), HasSubstr("FIELD before '=' is empty"));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(s, before));
}

}  // namespace
}  // namespace eppsim
