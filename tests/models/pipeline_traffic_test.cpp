#include "models/pipeline_traffic.h"

#include <gtest/gtest.h>

#include "base/errors.h"

namespace eppsim {
namespace {

TEST(PipelineBoundary, TokensTimesHiddenTimesElementBytes) {
  const TransformerSpec& m = *find_model_preset("llama2-7b");
  EXPECT_EQ(pipeline_boundary_bytes(m, 4096), Bytes(4096ull * 4096 * 2));
  EXPECT_EQ(pipeline_boundary_bytes(m, 4096, 4), Bytes(1024ull * 4096 * 2));  // sharded by SP
  EXPECT_EQ(pipeline_boundary_bytes(m, 3, 2), Bytes(12288));                  // 1.5 tokens per rank
  EXPECT_EQ(pipeline_boundary_bytes(m, 0), Bytes(0));
}

TEST(PipelineBoundary, MoreShardingSendsLessPerRank) {
  const TransformerSpec& m = *find_model_preset("llama2-13b");
  EXPECT_LT(pipeline_boundary_bytes(m, 65536, 8), pipeline_boundary_bytes(m, 65536, 4));
  EXPECT_THROW(pipeline_boundary_bytes(m, 65536, 0), InputError);
}

}  // namespace
}  // namespace eppsim
