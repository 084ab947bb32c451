/**
 * How much the real-user prompts should weigh in training: for each
 * realWeight:titleWeight[:multilingualWeight[:codeQuestionsWeight[:personaWeight[:reasoningWeight]]]] (the last four default to the shipped ones), how many everyday prompts (router/everyday-prompts.ts) the model
 * trained that way sends to svc-code or svc-smart and its accuracy on the review set (eval/routing/review.jsonl,
 * or --extra FILE relative to the repository); with --lofo, its pooled leave-one-family-out figures on the
 * real-user prompts; with --held-out, how many of the Koala test set's prompts (never trained on) it routes
 * right, and the benchmarks' leave-one-source-out under-routing with that training. The shipped values are
 * in TRAIN_OPTIONS (router/train.ts); docs/routing.md gives the sweep.
 *
 *   npx tsc -p tsconfig.scripts.json && node .cache/scripts/scripts/sweep-real-weight.js \
 *     [--pairs 0.3:1,0.3:0.25,1:0.1,0.1:0.1:0.3] [--lofo] [--held-out] [--show]
 */
import { parseArgs } from 'node:util';
import { chooseTier, DEFAULT_QUALITY_BIAS } from '../src/routing/auto/decision.js';
import { TIERS } from '../src/routing/auto/tier.js';
import { quantise } from '../src/routing/auto/weights-codec.js';
import { leaveOneFamilyOut, leaveOneSourceOut, predict } from './router/cross-validate.js';
import { DEV_SET, EVERYDAY_SET, readDataset, REVIEW_SET, WRITTEN_SET } from './router/dataset.js';
import { EVERYDAY_PROMPTS } from './router/everyday-prompts.js';
import { readFeatureFile, trainableExamples } from './router/feature-file.js';
import { EVALUATION_ONLY_SOURCES } from './router/real-set.js';
import { decisions, score, scoreByLength } from './router/score.js';
import { featurize, train, TRAIN_OPTIONS, type TrainOptions } from './router/train.js';

const { values } = parseArgs({
  options: {
    pairs: { type: 'string', default: '0:1,0.1:1,0.3:1,1:1,0.3:0.5,0.3:0.25,0.3:0.1,0.3:0,0.1:0.25,0.1:0.1,1:0.25,1:0.1' },
    lofo: { type: 'boolean', default: false },
    'held-out': { type: 'boolean', default: false },
    show: { type: 'boolean', default: false },
    // With --lofo: each family's figures held out as well.
    families: { type: 'boolean', default: false },
    // A labelled set (dataset.ts's format) to score each model on as well: accuracy, under, over.
    extra: { type: 'string', default: REVIEW_SET },
  },
});
const dev = readDataset(DEV_SET);
const written = readDataset(WRITTEN_SET);
const real = readFeatureFile(dev);
const base = featurize([...dev, ...written]);
const koala = real.filter((r) => EVALUATION_ONLY_SOURCES.has(r.source));
const trainableReal = trainableExamples(real);
const probes = featurize(EVERYDAY_PROMPTS.map((prompt, i) => ({ id: `everyday:${i}`, source: 'everyday', tier: 'fast' as const, prompt })));
const extraRows = values.extra ? readDataset(values.extra) : [];
const everydaySet = featurize(readDataset(EVERYDAY_SET));
const extra = featurize(extraRows);
const pct = (x: number | null): string => (x === null ? 'n/a' : `${(100 * x).toFixed(1)}%`);

for (const pair of values.pairs.split(',')) {
  const [
    realWeight,
    titleWeight,
    multilingualWeight = TRAIN_OPTIONS.multilingualWeight,
    codeQuestionsWeight = TRAIN_OPTIONS.codeQuestionsWeight,
    personaWeight = TRAIN_OPTIONS.personaWeight,
    reasoningWeight = TRAIN_OPTIONS.reasoningWeight,
  ] = pair.split(':').map(Number) as [number, number, number?, number?, number?, number?];
  const options: TrainOptions = { ...TRAIN_OPTIONS, realWeight, titleWeight, multilingualWeight, codeQuestionsWeight, personaWeight, reasoningWeight };
  const model = quantise(train([...base, ...(realWeight > 0 ? trainableReal : [])], options));
  const probs = predict(model, probes);
  const tiers = probs.map((p) => TIERS[chooseTier(p, DEFAULT_QUALITY_BIAS)]);
  const count = (tier: string): number => tiers.filter((t) => t === tier).length;
  const everydayUp = predict(model, everydaySet).filter((p) => chooseTier(p, DEFAULT_QUALITY_BIAS) !== 0).length;
  let line = `realWeight ${realWeight}, titles x${titleWeight}, multilingual x${multilingualWeight}, code questions x${codeQuestionsWeight}, personas x${personaWeight}, reasoning x${reasoningWeight}: everyday prompts to code ${count('code')}, to smart ${count('smart')} of ${tiers.length}; everyday set sent up ${everydayUp} of ${everydaySet.length}`;
  if (values.lofo && realWeight > 0) {
    const held = leaveOneFamilyOut(real, base, options);
    const rows = real.map((r) => ({ id: r.id, source: r.family, tier: r.tier, chars: r.chars }));
    const report = scoreByLength(decisions(real, held, DEFAULT_QUALITY_BIAS), rows);
    const m = report.overall;
    if (values.families) {
      for (const [family, f] of Object.entries(report.bySource)) {
        line += `\n  ${family.padEnd(32)} n ${String(f.n).padStart(4)}  accuracy ${pct(f.accuracy)}  under ${pct(f.underRouting ?? 0)}  over ${pct(f.overRouting ?? 0)}`;
      }
      line += '\n';
    }
    line += `; leave-one-family-out macro-F1 ${m.macroF1.toFixed(3)}, under ${pct(m.underRouting)}, over ${pct(m.overRouting)}, cost ${m.costRatio?.toFixed(3)}`;
  }
  if (values['held-out']) {
    const got = predict(model, koala.map((r) => r.example)).map((p) => TIERS[chooseTier(p, DEFAULT_QUALITY_BIAS)]);
    const right = koala.filter((r, i) => got[i] === r.tier).length;
    const held = leaveOneSourceOut(dev, written, options, realWeight > 0 ? trainableReal : []);
    const m = score(decisions(dev, held, DEFAULT_QUALITY_BIAS)).overall;
    line += `; Koala ${right}/${koala.length} right; benchmarks leave-one-source-out under ${pct(m.underRouting)}, macro-F1 ${m.macroF1.toFixed(3)}`;
  }
  if (extraRows.length > 0) {
    const got = predict(model, extra).map((p) => TIERS[chooseTier(p, DEFAULT_QUALITY_BIAS)]);
    let right = 0, under = 0, over = 0, hard = 0, easy = 0;
    extraRows.forEach((r, i) => {
      if (r.tier === 'fast') easy++; else hard++;
      if (got[i] === r.tier) right++;
      else if (got[i] === 'fast') under++;
      else if (r.tier === 'fast') over++;
    });
    line += `; ${values.extra}: accuracy ${pct(right / extraRows.length)}, under ${under}/${hard}, over ${over}/${easy}`;
  }
  console.log(line);
  if (values.show) {
    EVERYDAY_PROMPTS.forEach((prompt, i) => {
      if (tiers[i] !== 'fast') console.log(`  ${tiers[i]} [${[...(probs[i] as Float64Array)].map((x) => x.toFixed(2)).join('/')}] ${prompt}`);
    });
  }
}
