// Shared by the router experiments in this folder (not product code): the training data as
// scripts/router/train.ts weighs it, a linear trainer like it with an optional block of extra dense
// features per example (`e.vec`), leave-one-family-out on the real-user prompts, and the guards the shipped
// model is held to (Koala, the everyday set by language, the 41 everyday prompts, the review set).
// Needs the compiled scripts (npx tsc -p tsconfig.scripts.json) and, for the real prompts' texts,
// .cache/router/ (node scripts/gather-router-prompts.mjs).
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

export { minimise, DENSE_COUNT, TRAIN_OPTIONS };
export const TIER_NAMES = ['fast', 'code', 'smart'];
const tierOf = (p) => TIER_NAMES[chooseTier(p, DEFAULT_QUALITY_BIAS)];
const pct = (x) => (x == null ? '-' : (100 * x).toFixed(1) + '%');

function writtenWeight(source, op) {
  if (source === MULTILINGUAL_SOURCE) return op.multilingualWeight;
  if (source === CODE_QUESTIONS_SOURCE) return op.codeQuestionsWeight;
  if (source === PERSONA_SOURCE) return op.personaWeight;
  if (source === REASONING_SOURCE) return op.reasoningWeight;
  return 1;
}

/** Each example's weight in the loss, as train.ts sets them (sources balanced, the options' multipliers). */
export function exampleWeights(ex, op = TRAIN_OPTIONS) {
  const per = new Map();
  for (const e of ex) per.set(e.source, (per.get(e.source) ?? 0) + 1);
  const w = new Float64Array(ex.length);
  let total = 0;
  ex.forEach((e, i) => {
    const fam = e.real === true && TITLE_FAMILIES.has(e.source.replace(/^family:/, '')) ? op.titleWeight : 1;
    w[i] = (1 / Math.sqrt(per.get(e.source))) * (e.real === true ? op.realWeight * fam : writtenWeight(e.source, op));
    total += w[i];
  });
  for (let i = 0; i < w.length; i++) w[i] /= total;
  return w;
}

/**
 * The shipped model's logistic regression, plus `vecDim` extra dense features per example (`e.vec`, L2
 * `l2Vec`). With `drop` > 0 every example is also seen without them, at that share of its weight.
 */
export function linearModel({ vecDim = 0, l2Vec = TRAIN_OPTIONS.l2Dense, drop = 0 } = {}) {
  const P = HASH_SIZE * 3, Q = DENSE_COUNT * 3, BIAS = P + Q + vecDim * 3, COUNT = BIAS + 3;
  function logits(t, e, useVec, z) {
    z[0] = t[BIAS]; z[1] = t[BIAS + 1]; z[2] = t[BIAS + 2];
    for (let i = 0; i < e.index.length; i++) { const f = e.index[i] * 3, v = e.value[i]; z[0] += t[f] * v; z[1] += t[f + 1] * v; z[2] += t[f + 2] * v; }
    for (let j = 0; j < DENSE_COUNT; j++) { const v = e.dense[j]; if (v === 0) continue; const f = P + j * 3; z[0] += t[f] * v; z[1] += t[f + 1] * v; z[2] += t[f + 2] * v; }
    if (useVec) for (let j = 0; j < vecDim; j++) { const v = e.vec[j]; if (v === 0) continue; const f = P + Q + j * 3; z[0] += t[f] * v; z[1] += t[f + 1] * v; z[2] += t[f + 2] * v; }
  }
  /** The hashed features' part of the logits alone. */
  function hashedLogits(t, e, z) {
    z[0] = 0; z[1] = 0; z[2] = 0;
    for (let i = 0; i < e.index.length; i++) { const f = e.index[i] * 3, v = e.value[i]; z[0] += t[f] * v; z[1] += t[f + 1] * v; z[2] += t[f + 2] * v; }
  }
  function train(ex, op = TRAIN_OPTIONS) {
    const w = exampleWeights(ex, op);
    const z = new Float64Array(3);
    const passes = vecDim > 0 && drop > 0 ? [[true, 1 - drop], [false, drop]] : [[vecDim > 0, 1]];
    const objective = (t, g) => {
      g.fill(0);
      let loss = 0;
      for (let n = 0; n < ex.length; n++) {
        const e = ex[n];
        for (const [useVec, share] of passes) {
          logits(t, e, useVec, z);
          const m = Math.max(z[0], z[1], z[2]);
          const ls = m + Math.log(Math.exp(z[0] - m) + Math.exp(z[1] - m) + Math.exp(z[2] - m));
          const ww = w[n] * share;
          const L = e.label;
          loss += ww * (ls - z[L]);
          const g0 = ww * (Math.exp(z[0] - ls) - (L === 0)), g1 = ww * (Math.exp(z[1] - ls) - (L === 1)), g2 = ww * (Math.exp(z[2] - ls) - (L === 2));
          for (let i = 0; i < e.index.length; i++) { const f = e.index[i] * 3, v = e.value[i]; g[f] += g0 * v; g[f + 1] += g1 * v; g[f + 2] += g2 * v; }
          for (let j = 0; j < DENSE_COUNT; j++) { const v = e.dense[j]; if (v === 0) continue; const f = P + j * 3; g[f] += g0 * v; g[f + 1] += g1 * v; g[f + 2] += g2 * v; }
          if (useVec) for (let j = 0; j < vecDim; j++) { const v = e.vec[j]; if (v === 0) continue; const f = P + Q + j * 3; g[f] += g0 * v; g[f + 1] += g1 * v; g[f + 2] += g2 * v; }
          g[BIAS] += g0; g[BIAS + 1] += g1; g[BIAS + 2] += g2;
        }
      }
      for (let p = 0; p < BIAS; p++) {
        const t0 = t[p];
        if (t0 === 0) continue;
        const l2 = p < P ? op.l2Hashed : p < P + Q ? op.l2Dense : l2Vec;
        loss += 0.5 * l2 * t0 * t0;
        g[p] += l2 * t0;
      }
      return loss;
    };
    return minimise(objective, new Float64Array(COUNT), op.iterations);
  }
  function predict(t, ex) {
    const z = new Float64Array(3);
    return ex.map((e) => {
      logits(t, e, vecDim > 0, z);
      const m = Math.max(z[0], z[1], z[2]);
      const p = Float64Array.from(z, (x) => Math.exp(x - m));
      const s = p[0] + p[1] + p[2];
      for (let k = 0; k < 3; k++) p[k] /= s;
      return p;
    });
  }
  return { logits, hashedLogits, train, predict };
}

/** The texts of every prompt trained on or held out (benchmarks, written, real-user). */
export function promptTexts() {
  return [...readDataset(DEV_SET), ...readDataset(WRITTEN_SET), ...joinRealSet(readRealLabels(), readRealPrompts())].map((r) => r.prompt);
}

/**
 * The data, each example given `extra(prompt)` as its `vec` when `extra` is passed: `base` (benchmarks and
 * written prompts, always trained on), `real` (the labelled real-user prompts, with their texts).
 */
export function loadData(extra = null) {
  const baseRows = [...readDataset(DEV_SET), ...readDataset(WRITTEN_SET)];
  const realRows = joinRealSet(readRealLabels(), readRealPrompts());
  const attach = (rows, examples) => (extra === null ? examples : examples.map((e, i) => ({ ...e, vec: extra(rows[i].prompt) })));
  const base = attach(baseRows, featurize(baseRows));
  const rows = featureRows(realRows);
  const realExamples = attach(realRows, rows.map((r) => r.example));
  const real = rows.map((r, i) => ({ ...r, example: { ...realExamples[i], real: true, source: 'family:' + r.family } }));
  return { baseRows, realRows, base, real, featurizeRows: (rows) => attach(rows, featurize(rows)) };
}

/**
 * `fit(trainingExamples)` gives a `predict(examples)`: each family held out in turn, then a model on every
 * trainable prompt scored on the guards. Returns the report as lines.
 */
export function evaluate(data, fit, { families = false, showEveryday = false } = {}) {
  const { base, real, featurizeRows } = data;
  const probs = new Array(real.length);
  for (const fam of new Set(real.map((r) => r.family))) {
    const tr = real.filter((r) => r.family !== fam && !EVALUATION_ONLY_SOURCES.has(r.source)).map((r) => r.example);
    const predict = fit([...base, ...tr]);
    const idx = real.map((r, i) => (r.family === fam ? i : -1)).filter((i) => i >= 0);
    predict(idx.map((i) => real[i].example)).forEach((p, n) => (probs[idx[n]] = p));
  }
  const rep = scoreByLength(decisions(real, probs, DEFAULT_QUALITY_BIAS), real.map((r) => ({ id: r.id, source: r.family, tier: r.tier, chars: r.chars })));
  const lines = [`held out by family: macro-F1 ${rep.overall.macroF1.toFixed(3)} / under ${pct(rep.overall.underRouting)} / over ${pct(rep.overall.overRouting)} / cost ${rep.overall.costRatio?.toFixed(3)}`];
  if (families) for (const [f, m] of Object.entries(rep.bySource)) lines.push(`  ${f.padEnd(32)} accuracy ${pct(m.accuracy)} under ${pct(m.underRouting)} over ${pct(m.overRouting)}`);
  const predict = fit([...base, ...real.filter((r) => !EVALUATION_ONLY_SOURCES.has(r.source)).map((r) => r.example)]);
  const koala = real.filter((r) => EVALUATION_ONLY_SOURCES.has(r.source));
  const koalaRight = predict(koala.map((r) => r.example)).filter((p, i) => tierOf(p) === koala[i].tier).length;
  const everydayRows = readDataset(EVERYDAY_SET);
  const everyday = predict(featurizeRows(everydayRows));
  const upByLang = {};
  everydayRows.forEach((r, i) => {
    if (tierOf(everyday[i]) === 'fast') return;
    upByLang[r.lang] = (upByLang[r.lang] ?? 0) + 1;
    if (showEveryday) lines.push(`  everyday sent up (${r.lang}): ${r.prompt.slice(0, 70)}`);
  });
  const up = Object.values(upByLang).reduce((a, b) => a + b, 0);
  const e41Rows = EVERYDAY_PROMPTS.map((prompt, i) => ({ id: `e${i}`, source: 'everyday', tier: 'fast', prompt }));
  const up41 = predict(featurizeRows(e41Rows)).map((p, i) => [tierOf(p), e41Rows[i].prompt]).filter(([t]) => t !== 'fast');
  const reviewRows = readDataset(REVIEW_SET);
  let right = 0, under = 0, over = 0;
  predict(featurizeRows(reviewRows)).forEach((p, i) => {
    const got = tierOf(p), want = reviewRows[i].tier;
    if (got === want) right++;
    else if (got === 'fast') under++;
    else if (want === 'fast') over++;
  });
  lines.push(`Koala ${koalaRight}/${koala.length} right; everyday set sent up ${up}/${everydayRows.length} ${JSON.stringify(upByLang)}; 41 everyday sent up ${up41.length} (${up41.map(([, p]) => p.slice(0, 30)).join(' | ')}); review set ${pct(right / reviewRows.length)}, under ${under}, over ${over}`);
  return lines;
}
