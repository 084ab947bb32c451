/**
 * The plumbing of the real-user prompts: labels are refused when they do not say how they were decided,
 * a label is never paired with other words than it was given for, a feature file is refused when it is
 * malformed or made by another extraction, and an evaluation-only source is never learnt.
 */
import { describe, expect, it } from 'vitest';
import { predictHeldOut } from '../../scripts/router/cross-validate.js';
import { DEV_SET, readDataset, WRITTEN_SET } from '../../scripts/router/dataset.js';
import { decodeFeatureFile, encodeFeatureFile, extractionFingerprint, featureRows, readFeatureFile } from '../../scripts/router/feature-file.js';
import { EVALUATION_ONLY_SOURCES, joinRealSet, parseRealLabels, sha256Hex, type RealLabel } from '../../scripts/router/real-set.js';
import { featurize, TRAIN_OPTIONS } from '../../scripts/router/train.js';
import { TIERS } from '../../src/routing/auto/tier.js';

const prompt = 'how do I reverse a list in python';
const label = (over: Partial<RealLabel> = {}): RealLabel => ({
  id: 'conala-so:1',
  source: 'conala-so',
  family: 'qa-forum-code',
  lang: 'en',
  sha256: sha256Hex(prompt),
  chars: prompt.length,
  tier: 'code',
  why: 'programming question',
  passes: [
    { tier: 'code', why: 'a' },
    { tier: 'code', why: 'b' },
  ],
  review: null,
  ...over,
});
const line = (l: object): string => JSON.stringify(l);

describe('real-user labels', () => {
  it('takes the passes when they agree, and the review when they do not', () => {
    expect(parseRealLabels(line(label()), 'x')).toHaveLength(1);
    const split = label({
      tier: 'fast',
      passes: [
        { tier: 'code', why: 'a' },
        { tier: 'fast', why: 'b' },
      ],
      review: { tier: 'fast', why: 'c' },
    });
    expect(parseRealLabels(line(split), 'x')[0]?.tier).toBe('fast');
  });

  it('refuses a tier that is neither the agreed one nor the review', () => {
    expect(() => parseRealLabels(line(label({ tier: 'smart' })), 'x')).toThrow(/passes' when they agree/);
    const unreviewed = label({
      passes: [
        { tier: 'code', why: 'a' },
        { tier: 'fast', why: 'b' },
      ],
    });
    expect(() => parseRealLabels(line(unreviewed), 'x')).toThrow(/review/);
    expect(() => parseRealLabels(`${line(label())}\n${line(label())}`, 'x')).toThrow(/duplicate id/);
    expect(() => parseRealLabels(line(label({ sha256: 'abc' })), 'x')).toThrow(/sha256/);
  });

  it('pairs a label only with the text it was given for', () => {
    const labels = [label()];
    const same = new Map([['conala-so:1', { id: 'conala-so:1', source: 'conala-so', family: 'qa-forum-code', lang: 'en', prompt }]]);
    expect(joinRealSet(labels, same)[0]?.prompt).toBe(prompt);
    const edited = new Map([['conala-so:1', { id: 'conala-so:1', source: 'conala-so', family: 'qa-forum-code', lang: 'en', prompt: `${prompt}?` }]]);
    expect(() => joinRealSet(labels, edited)).toThrow(/1 changed since labelled/);
    expect(() => joinRealSet(labels, new Map())).toThrow(/1 labelled prompts missing/);
  });
});

describe('real-user feature file', () => {
  const dev = readDataset(DEV_SET);
  const rows = featureRows([{ id: 'x:1', source: 'x', family: 'f', prompt, tier: 'code' }]);

  it('round-trips the features exactly, with the extraction fingerprint', () => {
    const decoded = decodeFeatureFile(encodeFeatureFile(rows, 'abc'));
    expect(decoded.fingerprint).toBe('abc');
    expect(Array.from(decoded.rows[0]?.example.value ?? [])).toEqual(Array.from(rows[0]?.example.value ?? []));
    expect(decoded.rows[0]?.example.label).toBe(TIERS.indexOf('code'));
  });

  it('refuses a malformed file', () => {
    const bad = encodeFeatureFile(rows.map((r) => ({ ...r, tier: 'urgent' as 'code' })), 'abc');
    expect(() => decodeFeatureFile(bad)).toThrow(/malformed/);
  });

  it('is refused when the committed file was made by another extraction', () => {
    // The committed file matches the current extraction (the tests below would fail otherwise) ...
    expect(readFeatureFile(dev).length).toBeGreaterThan(3000);
    // ... and the fingerprint moves with the extraction: one more prompt read is another fingerprint.
    expect(extractionFingerprint(dev.slice(1))).not.toBe(extractionFingerprint(dev));
  });
});

describe('evaluation-only sources', () => {
  it('never teach a model: flipping their labels changes no other prediction', () => {
    const real = readFeatureFile(readDataset(DEV_SET));
    // Two families and the evaluation-only source: enough to train, small enough to train quickly.
    const koala = real.filter((r) => EVALUATION_ONLY_SOURCES.has(r.source));
    const others = real.filter((r) => r.family === 'search-queries' || r.family === 'qa-forum-code').slice(0, 300);
    const base = featurize(readDataset(WRITTEN_SET));
    const run = (flip: boolean): Float64Array[] => {
      const rows = [...koala, ...others];
      const examples = rows.map((r, i) => (flip && i < koala.length ? { ...r.example, label: (r.example.label + 1) % 3 } : r.example));
      return predictHeldOut(
        examples,
        rows.map((r) => r.family),
        base,
        // Real prompts must weigh something here, or flipping any of them could change nothing.
        { ...TRAIN_OPTIONS, realWeight: 1 },
        (i) => !EVALUATION_ONLY_SOURCES.has((rows[i] as (typeof rows)[number]).source),
      ).slice(koala.length);
    };
    expect(koala.length).toBeGreaterThan(100);
    expect(run(true).map((p) => Array.from(p))).toEqual(run(false).map((p) => Array.from(p)));
  }, 120_000);
});
