"""Export a PyTorch module to ONNX for training with memc.

torch.onnx.export's defaults are made for inference: eval mode folds BatchNorm into the
convolutions and drops Dropout, and constant folding pre-transposes Linear weights into new
initializers named onnx::MatMul_N and splits tied weights. memc would then train another model
than the one in PyTorch. This helper exports the module as it trains:

- BatchNorm and Dropout in training form (TrainingMode.TRAINING), whatever mode the module is
  in; the module's state (running statistics, mode) is the same after the export as before,
  and the file holds the state_dict from before the export bit for bit (tracing in training
  mode updates the running statistics once), num_batches_tracked and other entries the graph
  does not read included;
- no constant folding, so every initializer keeps its state_dict name and its layout;
- a dynamic batch axis (axis 0 of every input and output) unless asked otherwise;
- what ONNX cannot say, in the model's metadata_props (all values JSON):
    memc.export_version  "1"
    memc.parameters      initializer names that train (nn.Parameter with requires_grad)
    memc.buffers         every other initializer: module buffers, frozen parameters, and
                         constants the exporter wrote
    memc.tied            groups of state_dict names that are one tensor, the exported name
                         first (torch exports a shared parameter once)
    memc.padding_idx     {embedding weight name: padding_idx}: rows that get no gradient
    memc.batch_axis      {input or output name: axis} for the dynamic batch axis
    memc.example_shapes  {input name: shape of the example the export traced}

Use it from Python:

    from memc_export import export
    export(model, (example_input,), "model.onnx", input_names=["input_ids"])

or from the command line, with a Python file whose function returns (model, example_args):

    python3 python/memc_export.py mymodel.py:make_model -o model.onnx

It needs only torch and onnx. Then: memc model.onnx --loss cross_entropy ... -o train
"""
import argparse
import copy
import importlib.util
import json
import os
import sys

import onnx
import torch
from onnx import numpy_helper

METADATA_VERSION = "1"
DEFAULT_OPSET = 17


def _as_tuple(args):
    return args if isinstance(args, tuple) else (args,)


def _all_parameters(module, prefix=""):
    """(state_dict name, parameter) for every name a parameter has, shared ones repeated:
    named_parameters() lists a shared parameter once, and torch 1.13 cannot be told otherwise."""
    for name, parameter in module._parameters.items():
        if parameter is not None:
            yield prefix + name, parameter
    for name, child in module._modules.items():
        if child is not None:
            yield from _all_parameters(child, prefix + name + ".")


def _tied_groups(model):
    """Groups of state_dict names that are the same parameter, in registration order."""
    names_of = {}
    for name, parameter in _all_parameters(model):
        names_of.setdefault(id(parameter), []).append(name)
    return [names for names in names_of.values() if len(names) > 1]


def _padding_rows(model):
    rows = {}
    for module_name, module in model.named_modules():
        if isinstance(module, torch.nn.Embedding) and module.padding_idx is not None:
            prefix = module_name + "." if module_name else ""
            rows[prefix + "weight"] = int(module.padding_idx)
    return rows


def _dynamic_axes(names, batch_axis):
    return {name: {batch_axis: "batch"} for name in names}


def _exported_name(names, initializers):
    """The name of a tied group the exporter kept (it writes a shared parameter once)."""
    kept = [name for name in names if name in initializers]
    return kept[0] if kept else names[0]


def metadata_for(model, graph, input_names, output_names, batch_axis, example_args):
    """The metadata_props memc reads, for `graph` exported from `model`."""
    initializers = {tensor.name for tensor in graph.initializer}
    trainable = {name for name, parameter in _all_parameters(model) if parameter.requires_grad}
    tied = []
    for names in _tied_groups(model):
        kept = _exported_name(names, initializers)
        tied.append([kept] + [name for name in names if name != kept])
    parameters = sorted(initializers & trainable)
    buffers = sorted(initializers - trainable)
    metadata = {
        "memc.export_version": METADATA_VERSION,
        "memc.parameters": parameters,
        "memc.buffers": buffers,
        "memc.tied": tied,
        "memc.padding_idx": _padding_rows(model),
        "memc.example_shapes": {name: list(arg.shape) for name, arg in
                                zip(input_names, example_args) if isinstance(arg, torch.Tensor)},
    }
    if batch_axis is not None:
        metadata["memc.batch_axis"] = {name: batch_axis for name in input_names + output_names}
    return {key: json.dumps(value) for key, value in metadata.items()}


def _as_initializer(value, name):
    """A TensorProto of `value`'s exact bytes (numpy has no bfloat16: its bits go as int16)."""
    value = value.detach().cpu()
    if value.dtype == torch.bfloat16:
        tensor = numpy_helper.from_array(value.view(torch.int16).numpy(), name)
        tensor.data_type = onnx.TensorProto.BFLOAT16
        return tensor
    return numpy_helper.from_array(value.numpy(), name)


def _write_state(graph, state, tied_groups):
    """Makes the file hold `state` (the state_dict before the export) bit for bit.

    Tracing in training mode updated BatchNorm's running statistics once before torch wrote
    them; every initializer named in the state_dict takes its value from before. Entries the graph
    does not read (BatchNorm's num_batches_tracked, buffers the forward ignores) are added as
    initializers, so memc carries them through training, checkpoints and --save, and
    load_state_dict(strict=True) takes what it saves. A tied name is written once, under the
    name the exporter kept."""
    present = {tensor.name: tensor for tensor in graph.initializer}
    aliases = {name for names in tied_groups for name in names
               if name != _exported_name(names, present)}
    for name, value in state.items():
        if name in present:
            present[name].CopyFrom(_as_initializer(value, name))
        elif name not in aliases:
            graph.initializer.append(_as_initializer(value, name))


def export(model, args, path, input_names=None, output_names=None, batch_axis=0,
           opset_version=DEFAULT_OPSET, **torch_onnx_export_kwargs):
    """Exports `model` traced on `args` to `path` for training with memc.

    batch_axis: the axis of every input and output that is the batch (dynamic in the file);
    None keeps every shape as traced. Other keyword arguments go to torch.onnx.export, except
    the ones this helper must set (training, do_constant_folding), which are refused.
    """
    for fixed in ("training", "do_constant_folding", "export_params"):
        if fixed in torch_onnx_export_kwargs:
            raise ValueError(f"memc_export sets {fixed} itself (it exports for training)")
    args = _as_tuple(args)
    input_names = list(input_names or [f"input{i}" if i else "input" for i in range(len(args))])
    output_names = list(output_names or ["output"])
    dynamic_axes = torch_onnx_export_kwargs.pop("dynamic_axes", None)
    if dynamic_axes is None and batch_axis is not None:
        dynamic_axes = _dynamic_axes(input_names + output_names, batch_axis)

    # Tracing in training mode runs BatchNorm's update once: export from the state the user
    # has and put that state (values and train/eval mode of every module) back afterwards.
    saved_state = copy.deepcopy(model.state_dict())
    saved_modes = {name: module.training for name, module in model.named_modules()}
    model.train()
    try:
        torch.onnx.export(model, args, path, export_params=True,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                          input_names=input_names, output_names=output_names,
                          dynamic_axes=dynamic_axes, opset_version=opset_version,
                          **torch_onnx_export_kwargs)
    finally:
        model.load_state_dict(saved_state)
        for name, module in model.named_modules():
            module.training = saved_modes[name]

    onnx_model = onnx.load(path)
    _write_state(onnx_model.graph, saved_state, _tied_groups(model))
    metadata = metadata_for(model, onnx_model.graph, input_names, output_names, batch_axis, args)
    del onnx_model.metadata_props[:]
    for key, value in metadata.items():
        onnx_model.metadata_props.add(key=key, value=value)
    # A protobuf holds at most 2 GiB: larger models keep their weights beside, as torch wrote them.
    external = onnx_model.ByteSize() >= 2**31
    onnx.save(onnx_model, path, save_as_external_data=external,
              location=os.path.basename(path) + ".data")
    onnx.checker.check_model(path)
    return metadata


def _load_factory(spec):
    file_name, _, function_name = spec.rpartition(":")
    if not file_name or not function_name:
        raise SystemExit(f"memc_export: expected FILE.py:FUNCTION, got '{spec}'")
    module_spec = importlib.util.spec_from_file_location("memc_export_user_model", file_name)
    if module_spec is None:
        raise SystemExit(f"memc_export: cannot load '{file_name}'")
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(file_name)))
    module_spec.loader.exec_module(module)
    if not hasattr(module, function_name):
        raise SystemExit(f"memc_export: '{file_name}' has no function '{function_name}'")
    return getattr(module, function_name)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Export a PyTorch module to ONNX for training "
                                                 "with memc.")
    parser.add_argument("factory", help="FILE.py:FUNCTION, a function returning "
                                        "(model, example_args)")
    parser.add_argument("-o", "--output", required=True, help="the .onnx file to write")
    parser.add_argument("--input-names", help="comma-separated names of the inputs")
    parser.add_argument("--output-names", help="comma-separated names of the outputs")
    parser.add_argument("--batch-axis", type=int, default=0,
                        help="the batch axis of every input and output (default 0)")
    parser.add_argument("--static-batch", action="store_true",
                        help="keep every shape as traced (no dynamic batch axis)")
    parser.add_argument("--opset", type=int, default=DEFAULT_OPSET,
                        help=f"ONNX opset (default {DEFAULT_OPSET})")
    options = parser.parse_args(argv)
    model, example_args = _load_factory(options.factory)()
    split = lambda text: text.split(",") if text else None  # noqa: E731
    metadata = export(model, example_args, options.output,
                      input_names=split(options.input_names),
                      output_names=split(options.output_names),
                      batch_axis=None if options.static_batch else options.batch_axis,
                      opset_version=options.opset)
    parameters = json.loads(metadata["memc.parameters"])
    buffers = json.loads(metadata["memc.buffers"])
    print(f"memc_export: wrote {options.output}: {len(parameters)} parameters, "
          f"{len(buffers)} buffers")


if __name__ == "__main__":
    main()
