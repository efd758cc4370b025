// RUN: memc-opt '--memc-build-train-step=optimizer=sgd world-size=4 bucket-cap-mb=0' %s | FileCheck %s --check-prefix=RANKS
// RUN: memc-opt '--memc-build-train-step=optimizer=sgd world-size=4' %s | FileCheck %s --check-prefix=BUCKET
// RUN: memc-opt '--memc-build-train-step=optimizer=adamw world-size=2 accumulation-steps=3 clip-grad-norm=1.0 bucket-cap-mb=0' %s | FileCheck %s --check-prefix=ACCUM
// RUN: memc-opt '--memc-build-train-step=optimizer=sgd' %s | FileCheck %s --check-prefix=ONE
// RUN: memc-opt '--memc-build-train-step=optimizer=adamw world-size=4 zero-stage=0 clip-grad-norm=1.0' %s | FileCheck %s --check-prefix=STAGE0
// RUN: memc-opt '--memc-build-train-step=optimizer=adamw world-size=4 zero-stage=1 clip-grad-norm=1.0 bucket-cap-mb=0' %s | FileCheck %s --check-prefix=STAGE1
// RUN: memc-opt '--memc-build-train-step=optimizer=adamw world-size=2 zero-stage=2 accumulation-steps=2' %s | FileCheck %s --check-prefix=STAGE2
// RUN: memc-opt '--memc-build-train-step=optimizer=adamw world-size=4 zero-stage=3' %s | FileCheck %s --check-prefix=STAGE3
// RUN: memc-opt '--memc-build-train-step=optimizer=adamw world-size=4 zero-stage=3 freeze=b' %s | FileCheck %s --check-prefix=FROZEN

// Data parallel (--world-size 4, one gradient per bucket): each gradient is summed over the
// ranks right after the backward produces it, then divided by the ranks; the loss is weighed by
// the counted labels of every rank (memc.loss_weight), so the ranks compute one bigger batch's
// step.
// RANKS-LABEL: func.func @train_step
// RANKS-SAME: {memc.input = "memc.loss_weight"}
// RANKS: %{{[a-z_0-9]+}}, %[[WG:[a-z_0-9]+]], %[[BG:[a-z_0-9]+]] = memc.linear_cross_entropy_grad
// RANKS-NEXT: %[[SB:.*]] = memc.all_reduce %[[BG]] {world_size = 4 : i64} : (tensor<10xf32>) -> tensor<10xf32>
// RANKS-NEXT: %[[SW:.*]] = memc.all_reduce %[[WG]] {world_size = 4 : i64} : (tensor<16x10xf32>) -> tensor<16x10xf32>
// RANKS-NEXT: %[[QUARTER:.*]] = memc.constant dense<2.500000e-01> : tensor<f32>
// RANKS-NEXT: memc.mul %[[SW]], %[[QUARTER]]
// RANKS-NOT: memc.all_reduce
// RANKS: return

// Buckets (DDP's 25 MiB by default): the gradients that fit are flattened into one tensor,
// summed in one all-reduce right after the last of them is produced, and cut back.
// BUCKET-LABEL: func.func @train_step
// BUCKET: %{{[a-z_0-9]+}}, %[[WG:[a-z_0-9]+]], %[[BG:[a-z_0-9]+]] = memc.linear_cross_entropy_grad
// BUCKET-NEXT: %[[WF:.*]] = memc.reshape %[[WG]] : tensor<16x10xf32> -> tensor<160xf32>
// BUCKET-NEXT: %[[BF:.*]] = memc.reshape %[[BG]] : tensor<10xf32> -> tensor<10xf32>
// BUCKET-NEXT: %[[FLAT:.*]] = memc.concat %[[WF]], %[[BF]] {axis = 0 : i64} : (tensor<160xf32>, tensor<10xf32>) -> tensor<170xf32>
// BUCKET-NEXT: %[[SUM:.*]] = memc.all_reduce %[[FLAT]] {world_size = 4 : i64} : (tensor<170xf32>) -> tensor<170xf32>
// BUCKET-NEXT: %{{.*}}:2 = memc.split %[[SUM]] {axis = 0 : i64, sizes = array<i64: 160, 10>}
// BUCKET-NOT: memc.all_reduce
// BUCKET: return

// With accumulation the ranks meet once per optimizer step: the all-reduce of each
// accumulated sum is gated by memc.apply, and the mean is over ranks x micro-batches (1/6).
// The accumulator restarts from the local sum, before the ranks'; the clip sees the global
// gradient, so every rank clips alike.
// ACCUM-LABEL: func.func @train_step
// ACCUM-SAME: %[[ACC:[a-z0-9]+]]: tensor<16x10xf32> {memc.param = "w.grad_accum"
// ACCUM-SAME: %[[APPLY:[a-z0-9]+]]: tensor<f32> {memc.input = "memc.apply"}
// ACCUM: %[[SUM:.*]] = memc.add %[[ACC]], %{{.*}} : (tensor<16x10xf32>, tensor<16x10xf32>) -> tensor<16x10xf32>
// ACCUM-NEXT: %[[GLOBAL:.*]] = memc.all_reduce %[[SUM]], %[[APPLY]] {world_size = 2 : i64} : (tensor<16x10xf32>, tensor<f32>) -> tensor<16x10xf32>
// ACCUM: %[[SIXTH:.*]] = memc.constant dense<0.166666672> : tensor<f32>
// ACCUM-NEXT: %[[MEAN:.*]] = memc.mul %[[GLOBAL]], %[[SIXTH]]
// ACCUM: memc.mul %[[MEAN]], %[[MEAN]]
// ACCUM: memc.sqrt
// ACCUM: memc.adamw_update
// ACCUM: memc.where %{{.*}}, %{{.*}}, %[[SUM]]

// ZeRO, before and after: at stage 0 (the same flags, 4 ranks, clipping) every rank keeps whole
// optimizer state, all-reduces whole gradients, clips on them and updates the whole parameter.
// STAGE0-LABEL: func.func @train_step
// STAGE0-SAME: tensor<16x10xf32> {memc.param = "w.exp_avg", memc.param_kind = "optimizer_state"
// STAGE0-NOT: memc.shard
// STAGE0: memc.adamw_update {{.*}} : (tensor<16x10xf32>, tensor<16x10xf32>
// STAGE0-NOT: memc.all_gather
// STAGE0: return

// Stage 1: the state is rank r's flat shard (160 elements over 4 ranks: 40 each, 10 over 4: 3,
// the last padded). Each rank takes its shard of the summed gradient; the clip's squares are
// summed over the ranks; the rank updates its shard of the parameter, and the ranks gather it.
// STAGE1-LABEL: func.func @train_step
// STAGE1-SAME: %[[M:[a-z0-9]+]]: tensor<40xf32> {memc.param = "w.exp_avg", memc.param_kind = "optimizer_state"
// STAGE1-SAME: tensor<3xf32> {memc.param = "b.exp_avg"
// STAGE1: %[[WSUM:.*]] = memc.all_reduce %weight_grad {world_size = 4 : i64}
// STAGE1-NEXT: %[[WSHARD:.*]] = memc.shard %[[WSUM]] {world_size = 4 : i64} : tensor<16x10xf32> -> tensor<40xf32>
// STAGE1: %[[SQUARES:.*]] = memc.reduce_sum
// STAGE1: %[[LOCAL:.*]] = memc.add
// STAGE1-NEXT: %[[GLOBAL:.*]] = memc.all_reduce %[[LOCAL]] {world_size = 4 : i64} : (tensor<f32>) -> tensor<f32>
// STAGE1-NEXT: memc.sqrt %[[GLOBAL]]
// STAGE1: %[[PSHARD:.*]] = memc.shard %arg2 {world_size = 4 : i64} : tensor<16x10xf32> -> tensor<40xf32>
// STAGE1-NEXT: %[[NEW:.*]], %{{.*}}, %{{.*}} = memc.adamw_update %[[PSHARD]], %{{.*}}, %[[M]]
// STAGE1-NEXT: memc.all_gather %[[NEW]] {world_size = 4 : i64} : (tensor<40xf32>) -> tensor<16x10xf32>

// Stage 2 with accumulation: each micro-batch's gradient is reduce-scattered as it is produced
// and added into a sharded accumulator; the gather waits for the micro-batch that applies.
// STAGE2-LABEL: func.func @train_step
// STAGE2-SAME: %[[ACC:[a-z0-9]+]]: tensor<80xf32> {memc.param = "w.grad_accum"
// STAGE2-SAME: %[[APPLY:[a-z0-9]+]]: tensor<f32> {memc.input = "memc.apply"}
// STAGE2: memc.linear_cross_entropy_grad
// STAGE2-NEXT: memc.reduce_scatter %bias_grad {world_size = 2 : i64} : tensor<10xf32> -> tensor<5xf32>
// STAGE2-NEXT: %[[WSHARD:.*]] = memc.reduce_scatter %weight_grad {world_size = 2 : i64} : tensor<16x10xf32> -> tensor<80xf32>
// STAGE2-NEXT: memc.add %[[ACC]], %[[WSHARD]] : (tensor<80xf32>, tensor<80xf32>) -> tensor<80xf32>
// STAGE2-NOT: memc.all_reduce
// STAGE2: %[[NEW:.*]], %{{.*}}, %{{.*}} = memc.adamw_update {{.*}} : (tensor<80xf32>
// STAGE2-NEXT: memc.all_gather %[[NEW]], %[[APPLY]] {world_size = 2 : i64} : (tensor<80xf32>, tensor<f32>) -> tensor<16x10xf32>

// Stage 3: the parameters are shards too (memc.shard_of names the whole shape). The forward
// gathers each right before it reads it, the backward gathers it again for itself (so the whole
// tensor is not kept in between), the gradients are reduce-scattered, and the update writes the
// shard: no gather after it.
// STAGE3-LABEL: func.func @train_step
// STAGE3-SAME: %[[W:[a-z0-9]+]]: tensor<40xf32> {memc.param = "w", memc.param_kind = "parameter", memc.shard_of = array<i64: 16, 10>}
// STAGE3-SAME: %[[B:[a-z0-9]+]]: tensor<3xf32> {memc.param = "b", memc.param_kind = "parameter", memc.shard_of = array<i64: 10>}
// STAGE3: %[[WF:.*]] = memc.all_gather %[[W]] {world_size = 4 : i64} : (tensor<40xf32>) -> tensor<16x10xf32>
// STAGE3-NEXT: %[[BF:.*]] = memc.all_gather %[[B]] {world_size = 4 : i64} : (tensor<3xf32>) -> tensor<10xf32>
// STAGE3-NEXT: memc.linear_cross_entropy %{{.*}}, %[[WF]], %{{.*}}, %[[BF]]
// STAGE3: %[[WB:.*]] = memc.all_gather %[[W]] {world_size = 4 : i64} : (tensor<40xf32>) -> tensor<16x10xf32>
// STAGE3-NEXT: %[[BB:.*]] = memc.all_gather %[[B]]
// STAGE3-NEXT: %{{.*}}, %[[WG:.*]], %[[BG:.*]] = memc.linear_cross_entropy_grad %{{.*}}, %{{.*}}, %[[WB]], %{{.*}}, %{{.*}}, %[[BB]]
// STAGE3-NEXT: memc.reduce_scatter %[[BG]] {world_size = 4 : i64} : tensor<10xf32> -> tensor<3xf32>
// STAGE3-NEXT: memc.reduce_scatter %[[WG]] {world_size = 4 : i64} : tensor<16x10xf32> -> tensor<40xf32>
// STAGE3: %[[NEW:.*]], %{{.*}}, %{{.*}} = memc.adamw_update %[[W]]
// STAGE3-NOT: memc.all_gather
// STAGE3: return %{{.*}}, %[[NEW]], {{.*}} : tensor<f32>, tensor<40xf32>

// Stage 3 shards frozen parameters too: gathered for their readers, never updated.
// FROZEN-LABEL: func.func @train_step
// FROZEN-SAME: %[[B:[a-z0-9]+]]: tensor<3xf32> {memc.param = "b", memc.param_kind = "parameter", memc.shard_of = array<i64: 10>}
// FROZEN: memc.all_gather %[[B]] {world_size = 4 : i64} : (tensor<3xf32>) -> tensor<10xf32>
// FROZEN-NOT: memc.adamw_update %[[B]]
// FROZEN: return

// One process: no collective.
// ONE-LABEL: func.func @train_step
// ONE-NOT: memc.all_reduce
// ONE-NOT: memc.loss_weight
// ONE: return
func.func @forward(%x: tensor<4x16xf32> {memc.input = "x"},
                   %w: tensor<16x10xf32> {memc.param = "w", memc.param_kind = "parameter"},
                   %b: tensor<10xf32> {memc.param = "b", memc.param_kind = "parameter"})
    -> (tensor<4x10xf32> {memc.output = "logits"}) {
  %0 = memc.matmul %x, %w : (tensor<4x16xf32>, tensor<16x10xf32>) -> tensor<4x10xf32>
  %1 = memc.add %0, %b : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  return %1 : tensor<4x10xf32>
}
