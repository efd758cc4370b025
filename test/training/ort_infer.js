// Runs an ONNX model with ONNX Runtime (the npm package onnxruntime-node, CPU), an inference
// engine independent of memc, for the tests that check the models memc saves.
//
//   node ort_infer.js MODEL INPUT DIMS IN.f32 OUTPUT OUT.f32
//
// INPUT is fed the float32 little-endian values of IN.f32 with DIMS (e.g. 2x3x8x8); OUTPUT's
// float32 values are written to OUT.f32. ONNX Runtime's module directory is NODE_PATH's.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main([ model, input, dims, inputPath, output, outputPath ]) {
  const session = await ort.InferenceSession.create(model);
  const bytes = fs.readFileSync(inputPath);
  const values = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  const shape = dims.split('x').map(Number);
  const results = await session.run({[input] : new ort.Tensor('float32', values, shape)});
  if (!(output in results))
    throw new Error(`the model has no output '${output}'`);
  const data = results[output].data;
  fs.writeFileSync(outputPath, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
}

main(process.argv.slice(2)).catch((error) => {
  console.error(`ort_infer: ${error.message}`);
  process.exit(1);
});
