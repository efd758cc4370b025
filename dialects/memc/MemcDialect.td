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

// The element types memc treats as first class. Mixed precision adds no new types.
def Memc_AnyElement : AnyTypeOf<[F32, BF16, F16, I64, I32, I1]>;
def Memc_Tensor : StaticShapeTensorOf<[F32, BF16, F16, I64, I32, I1]>;
def Memc_FloatTensor : StaticShapeTensorOf<[F32, BF16, F16]>;
def Memc_NumericTensor : StaticShapeTensorOf<[F32, BF16, F16, I64, I32]>;
def Memc_IndexTensor : StaticShapeTensorOf<[I64, I32]>;
def Memc_BoolTensor : StaticShapeTensorOf<[I1]>;

#endif // MEMC_DIALECT_TD
