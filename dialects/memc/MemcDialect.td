//===- MemcDialect.td - the memc dialect -------------------*- tablegen -*-===//
//
// The dialect memc compiles ONNX models into: tensor-level ops with static shapes, one op per
// concept of the ONNX/PyTorch op set, in a canonical form (Gemm is matmul + add, Squeeze is a
// reshape) so that later passes (autodiff, remat, fusion) see few ops.
//
//===----------------------------------------------------------------------===//

#ifndef MEMC_DIALECT_TD
#define MEMC_DIALECT_TD

include "mlir/IR/OpBase.td"

def Memc_Dialect : Dialect {
  let name = "memc";
  let cppNamespace = "::memc";
  let summary = "Tensor-level training IR for memory-optimized compilation";
  let description = [{
    Ops on statically shaped tensors of f32, bf16, f16, i64, i32 and i1. Model parameters are
    function arguments (never dense attributes), tagged with `memc.param` (their ONNX initializer
    name) and `memc.param_kind` (`parameter` or `buffer`) so that weights stay in their files.
  }];
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

class Memc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Memc_Dialect, mnemonic, traits>;

// The element types ops compute on: the dtype table's computed rows (kernels/DTypeTable.h),
// named once here and combined into every constraint. Mixed precision adds no new types; the
// table's storage-only types (u8, i8, nf4) join when an op computes them.
defvar Memc_FloatElements = [F32, BF16, F16];
defvar Memc_IndexElements = [I64, I32];
defvar Memc_NumericElements = !listconcat(Memc_FloatElements, Memc_IndexElements);
defvar Memc_AllElements = !listconcat(Memc_NumericElements, [I1]);

def Memc_AnyElement : AnyTypeOf<Memc_AllElements>;
def Memc_Tensor : StaticShapeTensorOf<Memc_AllElements>;
def Memc_FloatTensor : StaticShapeTensorOf<Memc_FloatElements>;
def Memc_NumericTensor : StaticShapeTensorOf<Memc_NumericElements>;
def Memc_IndexTensor : StaticShapeTensorOf<Memc_IndexElements>;
def Memc_BoolTensor : StaticShapeTensorOf<[I1]>;

#endif // MEMC_DIALECT_TD
