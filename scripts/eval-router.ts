/**
 * `npm run eval:router`: the router's cross-validated figures on eval/routing/dev.jsonl, computed by the
 * evaluation's scorer. k-fold (stratified, 5 folds) and leave-one-source-out, at the default quality
 * bias, without and with the prompts written for svc-gateway in the training folds (never scored), and
 * a sweep of the dial; then the real-user prompts (eval/routing/real-features.jsonl.gz), each family held
 * out in turn. Options: --folds N, --quality-bias Q, --no-written, --no-real, --real-only, --loso-only, --tables (the
 * scorer's own tables), --errors (list the misrouted prompts).
 */
import { parseArgs } from 'node:util';
import { DEFAULT_QUALITY_BIAS } from '../src/routing/auto/decision.js';
import { TRAIN_OPTIONS, type TrainOptions } from './router/train.js';
import { foldsOf, kFold, leaveOneFamilyOut, leaveOneSourceOut, predictHeldOut, type Probabilities } from './router/cross-validate.js';
import { DEV_SET, readDataset, WRITTEN_SET, type LabelledPrompt } from './router/dataset.js';
import { readFeatureFile, type FeatureRow } from './router/feature-file.js';
import { decisions, score, scoreByLength, type Metrics, type ScoreReport } from './router/score.js';
import { featurize, type Example } from './router/train.js';
import { EVALUATION_ONLY_SOURCES } from './router/real-set.js';
import { calibration } from './router/calibration.js';

const { values } = parseArgs({
  options: {
    folds: { type: 'string', default: '5' },
    'quality-bias': { type: 'string', default: String(DEFAULT_QUALITY_BIAS) },
    'no-written': { type: 'boolean', default: false },
    'no-real': { type: 'boolean', default: false },
    'real-only': { type: 'boolean', default: false },
    tables: { type: 'boolean', default: false },
    errors: { type: 'boolean', default: false },
    'loso-only': { type: 'boolean', default: false },
    'l2-hashed': { type: 'string' },
    'l2-dense': { type: 'string' },
    'real-weight': { type: 'string' },
    'title-weight': { type: 'string' },
    'no-balance': { type: 'boolean', default: false },
    'sweep': { type: 'boolean', default: false },
  },
});
const folds = Number(values.folds);
const qualityBias = Number(values['quality-bias']);

const options: TrainOptions = {
  ...TRAIN_OPTIONS,
  ...(values['l2-hashed'] ? { l2Hashed: Number(values['l2-hashed']) } : {}),
  ...(values['l2-dense'] ? { l2Dense: Number(values['l2-dense']) } : {}),
  ...(values['no-balance'] ? { balanceSources: false } : {}),
};
// The real-user prompts weigh what TRAIN_OPTIONS gives them, as in the shipped model; --real-weight and
// --title-weight try others.
const withReal: TrainOptions = {
  ...options,
  ...(values['real-weight'] ? { realWeight: Number(values['real-weight']) } : {}),
  ...(values['title-weight'] ? { titleWeight: Number(values['title-weight']) } : {}),
};
const dev = readDataset(DEV_SET);
const written = readDataset(WRITTEN_SET);
const real = values['no-real'] ? [] : readFeatureFile(dev);
const realExamples = real.map((r) => r.example);
const trainable = (i: number): boolean => !EVALUATION_ONLY_SOURCES.has((real[i] as FeatureRow).source);

const pct = (x: number | null): string => (x === null ? 'n/a' : `${(100 * x).toFixed(1)}%`);
function line(name: string, m: Metrics): string {
  return `${name.padEnd(24)} n=${String(m.n).padStart(4)}  acc ${pct(m.accuracy).padStart(6)}  macro-F1 ${m.macroF1.toFixed(3)}  ` +
    `under ${pct(m.underRouting).padStart(6)}  over ${pct(m.overRouting).padStart(6)}  cost ${m.costRatio?.toFixed(3) ?? 'n/a'}`;
}

function report(title: string, rows: readonly LabelledPrompt[], probs: Probabilities): void {
  const predicted = decisions(rows, probs, qualityBias);
  const r = score(predicted);
  console.log(`\n== ${title} (quality_bias ${qualityBias})`);
  if (values.errors) {
    rows.forEach((row, i) => {
      const tier = predicted[i]?.tier;
      if (tier === row.tier) return;
      const p = [...(probs[i] as Float64Array)].map((x) => x.toFixed(2)).join('/');
      console.log(`  ${row.tier}->${tier} [${p}] ${row.id}: ${row.prompt.slice(0, 110).replace(/\s+/g, ' ')}`);
    });
  }
  if (values.tables) {
    console.log(r.text);
    return;
  }
  for (const [source, m] of Object.entries(r.bySource)) console.log(line(`  ${source}`, m));
  console.log(line('OVERALL', r.overall));
  console.log('confusion (rows gold fast/code/smart, cols predicted):', JSON.stringify(r.overall.confusion));
  if (!values.sweep) return;
  const sweep = [0, 0.3, 0.5, 0.7, 0.85, 1].map((q) => {
    const m = score(decisions(rows, probs, q)).overall;
    return `  q=${q}: F1 ${m.macroF1.toFixed(3)} under ${pct(m.underRouting)} over ${pct(m.overRouting)} cost ${m.costRatio?.toFixed(3)}`;
  });
  console.log('dial sweep:\n' + sweep.join('\n'));
}

const trainableReal = realExamples.filter((_, i) => trainable(i));
const variants: [string, LabelledPrompt[], Example[]][] = values['real-only'] ? [] : [['dev only', [], []]];
if (!values['no-written'] && !values['real-only']) variants.push([`dev + ${written.length} written prompts in training`, written, []]);
if (real.length > 0 && !values['real-only']) {
  const extra = values['no-written'] ? [] : written;
  const name = `dev + ${extra.length} written + ${trainableReal.length} real-user prompts (weight ${withReal.realWeight}, titles x${withReal.titleWeight}) in training`;
  variants.push([name, extra, trainableReal]);
}
for (const [name, extra, extraExamples] of variants) {
  const opts = extraExamples.length > 0 ? withReal : options;
  if (!values['loso-only']) report(`${folds}-fold, ${name}`, dev, kFold(dev, folds, extra, opts, extraExamples));
  report(`leave-one-source-out, ${name}`, dev, leaveOneSourceOut(dev, extra, opts, extraExamples));
}
if (real.length > 0) {
  const extra = values['no-written'] ? [] : written;
  const base = featurize([...dev, ...extra]);
  reportReal('real-user prompts, leave-one-family-out (benchmarks + written + other families in training)', real, leaveOneFamilyOut(real, base, withReal));
  const loso = predictHeldOut(realExamples, real.map((r) => r.source), base, withReal, trainable);
  reportReal('real-user prompts, leave-one-source-out (benchmarks + written + the other sources in training)', real, loso);
  // The evaluation-only sources are in no training fold: their leave-one-source-out predictions are the
  // shipped training's, on prompts nothing was ever tuned on.
  const never = real.flatMap((r, i) => (trainable(i) ? [] : [i]));
  reportReal(
    'real-user prompts of the evaluation-only sources (never trained on), with the shipped training',
    never.map((i) => real[i] as FeatureRow),
    never.map((i) => loso[i] as Float64Array),
  );
  reportReal(
    'real-user prompts, none in training (benchmarks + written only)',
    real,
    predictHeldOut(realExamples, real.map(() => 'all'), base, options),
  );
  if (!values['loso-only']) {
    const probs = predictHeldOut(realExamples, foldsOf(real, folds), base, withReal, trainable);
    reportReal(`real-user prompts, ${folds}-fold (in distribution, for reference)`, real, probs);
  }
}

/** Per family (each scored as a source), pooled, and each family's confusion matrix. */
function reportReal(title: string, rows: readonly FeatureRow[], probs: Probabilities): void {
  const byFamily = (q: number): ScoreReport =>
    scoreByLength(decisions(rows, probs, q), rows.map((r) => ({ id: r.id, source: r.family, tier: r.tier, chars: r.chars })));
  const r = byFamily(qualityBias);
  console.log(`\n== ${title} (quality_bias ${qualityBias})`);
  if (values.errors) {
    const predicted = decisions(rows, probs, qualityBias);
    rows.forEach((row, i) => {
      const tier = predicted[i]?.tier;
      if (tier === row.tier) return;
      const p = [...(probs[i] as Float64Array)].map((x) => x.toFixed(2)).join('/');
      console.log(`  ${row.tier}->${tier} [${p}] ${row.id}`);
    });
  }
  if (values.tables) {
    console.log(r.text);
    return;
  }
  for (const [family, m] of Object.entries(r.bySource)) {
    console.log(line(`  ${family}`, m));
    console.log(`    confusion ${JSON.stringify(m.confusion)}`);
  }
  console.log(line('POOLED', r.overall));
  console.log('confusion (rows gold fast/code/smart, cols predicted):', JSON.stringify(r.overall.confusion));
  const c = calibration(probs, rows.map((row) => row.tier));
  console.log(`calibration of P(needs more than svc-fast): ECE ${c.ece.toFixed(3)}, mean predicted ${c.predicted.toFixed(3)}, observed ${c.observed.toFixed(3)}`);
  console.log(
    '  ' + c.bins.filter((b) => b.n > 0).map((b) => `[${b.from.toFixed(1)},${b.to.toFixed(1)}) n=${b.n} ${b.predicted.toFixed(2)}->${b.observed.toFixed(2)}`).join('  '),
  );
  if (!values.sweep) return;
  const sweep = [0, 0.3, 0.5, 0.7, 0.85, 1].map((q) => {
    const m = byFamily(q).overall;
    return `  q=${q}: F1 ${m.macroF1.toFixed(3)} under ${pct(m.underRouting)} over ${pct(m.overRouting)} cost ${m.costRatio?.toFixed(3)}`;
  });
  console.log('dial sweep:\n' + sweep.join('\n'));
}
