//===- InputStaging.cpp - a second place on the device for each input -----===//
#include "runtime/plan/InputStaging.h"

namespace memc::plan {

void addInputStaging(Plan &plan) {
  const uint64_t alignment = plan.alignment();
  uint64_t end = plan.persistent_bytes();
  for (Binding &input : *plan.mutable_inputs()) {
    if (input.has_staging())
      continue;
    Buffer staging = plan.buffers(input.buffer());
    staging.clear_alias_of();
    staging.set_region(PERSISTENT);
    staging.set_offset(end);
    staging.set_category(INPUTS);
    staging.set_name(input.name() + " (staged)");
    end = (end + staging.size_bytes() + alignment - 1) / alignment * alignment;
    input.set_staging(static_cast<uint32_t>(plan.buffers_size()));
    *plan.add_buffers() = std::move(staging);
  }
  plan.set_persistent_bytes(end);
}

} // namespace memc::plan
