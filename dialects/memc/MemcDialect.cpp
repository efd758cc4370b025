//===- MemcDialect.cpp - the memc dialect ---------------------------------===//
#include "dialects/memc/MemcDialect.h"

using namespace mlir;
using namespace memc;

#include "dialects/memc/MemcDialect.cpp.inc"
#include "dialects/memc/GradientInterface.cpp.inc"

void MemcDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/memc/MemcOps.cpp.inc"
      >();
}

Operation *MemcDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                            Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, elements);
}

std::string memc::locationName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string name = locationName(inner); !name.empty())
        return name;
  return "";
}
