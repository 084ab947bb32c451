#!/usr/bin/env node
// Experiment, not product code: a second stage over svc-auto's linear model (docs/routing.md, "A second
// stage"). Its inputs are the linear model's logits (all, and the hashed features' part alone) and the dense
// features; it is a linear map from them (--hidden 0) or that plus a layer of tanh units, trained on the
// linear model's out-of-fold logits (--inner folds of the training set) so that it learns how far they hold
// on prompts the linear model did not see. Scored held out by family with the shipped model's guards.
//
//   node scripts/experiments/stacked-combiner.mjs [--hidden 8] [--l2 1e-3] [--inner 4] [--families]
//
// Needs what harness.mjs needs; about ten minutes on a 2-core machine.
import { parseArgs } from 'node:util';
import { DENSE_COUNT, evaluate, exampleWeights, linearModel, loadData, minimise } from './harness.mjs';

const { values: o } = parseArgs({
  options: {
    hidden: { type: 'string', default: '8' },
    l2: { type: 'string', default: '1e-3' },
    inner: { type: 'string', default: '4' },
    families: { type: 'boolean', default: false },
  },
});
const H = Number(o.hidden), L2 = Number(o.l2), INNER = Number(o.inner);
const NI = 6 + DENSE_COUNT;
const linear = linearModel();

function inputs(t, examples) {
  const z = new Float64Array(3), h = new Float64Array(3);
  return examples.map((e) => {
    linear.logits(t, e, false, z);
    linear.hashedLogits(t, e, h);
    const x = new Float64Array(NI);
    x.set(h, 0);
    x.set(z, 3);
    for (let j = 0; j < DENSE_COUNT; j++) x[6 + j] = e.dense[j];
    return x;
  });
}

// Parameters: a linear map of the inputs (NI x 3) and its bias, then the hidden layer (NI x H, H) and its
// output (H x 3). Starts as the identity on the linear model's logits.
const SKIP = 0, BIAS = NI * 3, W1 = BIAS + 3, B1 = W1 + NI * H, W2 = B1 + H, COUNT = W2 + H * 3;
function forward(m, x, hid, out) {
  for (let k = 0; k < 3; k++) out[k] = m[BIAS + k];
  for (let i = 0; i < NI; i++) for (let k = 0; k < 3; k++) out[k] += m[SKIP + i * 3 + k] * x[i];
  for (let j = 0; j < H; j++) {
    let a = m[B1 + j];
    for (let i = 0; i < NI; i++) a += m[W1 + i * H + j] * x[i];
    hid[j] = Math.tanh(a);
    for (let k = 0; k < 3; k++) out[k] += m[W2 + j * 3 + k] * hid[j];
  }
}
function trainStage(X, labels, w) {
  const hid = new Float64Array(H), out = new Float64Array(3), d = new Float64Array(3);
  const objective = (m, g) => {
    g.fill(0);
    let loss = 0;
    for (let n = 0; n < X.length; n++) {
      const x = X[n];
      forward(m, x, hid, out);
      const mx = Math.max(out[0], out[1], out[2]);
      const ls = mx + Math.log(Math.exp(out[0] - mx) + Math.exp(out[1] - mx) + Math.exp(out[2] - mx));
      loss += w[n] * (ls - out[labels[n]]);
      for (let k = 0; k < 3; k++) d[k] = w[n] * (Math.exp(out[k] - ls) - (labels[n] === k ? 1 : 0));
      for (let k = 0; k < 3; k++) g[BIAS + k] += d[k];
      for (let i = 0; i < NI; i++) for (let k = 0; k < 3; k++) g[SKIP + i * 3 + k] += d[k] * x[i];
      for (let j = 0; j < H; j++) {
        let dh = 0;
        for (let k = 0; k < 3; k++) {
          g[W2 + j * 3 + k] += d[k] * hid[j];
          dh += d[k] * m[W2 + j * 3 + k];
        }
        const da = dh * (1 - hid[j] * hid[j]);
        g[B1 + j] += da;
        for (let i = 0; i < NI; i++) g[W1 + i * H + j] += da * x[i];
      }
    }
    // Biases are not penalised; the identity start is (weights are pulled toward zero, not toward it).
    for (let p = 0; p < COUNT; p++) {
      if ((p >= BIAS && p < W1) || (p >= B1 && p < W2)) continue;
      loss += 0.5 * L2 * m[p] * m[p];
      g[p] += L2 * m[p];
    }
    return loss;
  };
  const start = new Float64Array(COUNT);
  for (let p = W1; p < COUNT; p++) start[p] = 0.05 * Math.sin(p * 12.9898);
  for (let k = 0; k < 3; k++) start[SKIP + (3 + k) * 3 + k] = 1;
  return minimise(objective, start, 400);
}

function fit(examples) {
  const X = new Array(examples.length);
  const fold = examples.map((_, i) => Math.imul(i, 2654435761) >>> 0).map((h) => h % INNER);
  for (let f = 0; f < INNER; f++) {
    const t = linear.train(examples.filter((_, i) => fold[i] !== f));
    const idx = examples.map((_, i) => (fold[i] === f ? i : -1)).filter((i) => i >= 0);
    inputs(t, idx.map((i) => examples[i])).forEach((x, n) => (X[idx[n]] = x));
  }
  const stage = trainStage(X, examples.map((e) => e.label), exampleWeights(examples));
  const t = linear.train(examples);
  const hid = new Float64Array(H), out = new Float64Array(3);
  return (ex) =>
    inputs(t, ex).map((x) => {
      forward(stage, x, hid, out);
      const mx = Math.max(...out);
      const p = Float64Array.from(out, (v) => Math.exp(v - mx));
      const s = p[0] + p[1] + p[2];
      return p.map((v) => v / s);
    });
}

console.log(`stacked combiner ${JSON.stringify(o)}`);
for (const line of evaluate(loadData(), fit, { families: o.families })) console.log(line);
