/**
 * The committed features of the real-user prompts (eval/routing/real-features.jsonl.gz): for each prompt,
 * what the router reads of it (hashed buckets with their values, the hand-made features), its label, its
 * source and family and its length, and not its text. Training and cross-validation take these rows as
 * they take the features of a text, so a clean clone trains the shipped model and scores the real-user
 * figures without the texts.
 *
 * The features are only valid for the feature extraction that made them. The file carries a fingerprint
 * of that extraction (the features of the committed dev set); when the scanner, the lexicon or the caps
 * change, the fingerprint no longer matches and the file must be rebuilt from the local prompts
 * (`npm run data:router`).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { TIERS, type Tier } from '../../src/routing/auto/tier.js';
import { repoRoot, type LabelledPrompt } from './dataset.js';
import { EVALUATION_ONLY_SOURCES } from './real-set.js';
import type { Example } from './train.js';
import { featurize } from './train.js';

export const REAL_FEATURES = 'eval/routing/real-features.jsonl.gz';
const FORMAT = 'svc-router-features/1';

/** A real-user prompt as training and scoring see it. */
export interface FeatureRow {
  id: string;
  source: string;
  family: string;
  tier: Tier;
  /** The prompt's length in code points (the scorer prices input tokens by it). */
  chars: number;
  example: Example;
}

interface Header {
  format: string;
  fingerprint: string;
  rows: number;
}

interface Line {
  id: string;
  source: string;
  family: string;
  tier: Tier;
  chars: number;
  index: number[];
  value: number[];
  dense: number[];
}

/**
 * Texts in the scripts and shapes the real-user prompts have and the dev set lacks, so that a change of
 * how they are read (Cyrillic stems, a word list in Spanish, CJK segmentation) changes the fingerprint.
 */
const PROBES: readonly string[] = [
  'Как отбросить нули справа? функция replace, список, строку',
  '¿Cómo generar un archivo csv a partir de una lista? función, cadena, número',
  'Comment écrire une fonction récursive ? Écris un poème sur l\'été.',
  'Wie berechne ich die Wahrscheinlichkeit? Schreib eine Funktion in Python.',
  '我想学习编程，请帮我写一个排序函数。证明根号二是无理数。',
  'Pythonでリストをソートする方法・人々のテキストファイル読み込み？',
  '파이썬으로 리스트를 정렬하는 방법은?',
  'هل ستربح روسيا الحرب؟ اكتب دالة بلغة بايثون',
  'Ｐｙｔｈｏｎ ２０２４ 东-西 θ = π/4, ∑ x² ≤ 10',
  '$\\int_0^1 x^2 \\, dx$ and `arr.map(x => x * 2)` in camelCase_snake',
];

/** A digest of what the current extraction makes of the dev set and the probes: changes whenever the features do. */
export function extractionFingerprint(dev: readonly LabelledPrompt[]): string {
  const hash = createHash('sha256');
  const probes = PROBES.map((prompt, i): LabelledPrompt => ({ id: `probe:${i}`, source: 'probe', prompt, tier: 'fast' }));
  for (const e of featurize([...dev, ...probes])) {
    hash.update(JSON.stringify([Array.from(e.index), Array.from(e.value), Array.from(e.dense)]));
  }
  return hash.digest('hex');
}

export function featureRows(rows: readonly LabelledPrompt[]): FeatureRow[] {
  const examples = featurize(rows);
  return rows.map((r, i) => ({
    id: r.id,
    source: r.source,
    family: r.family ?? r.source,
    tier: r.tier,
    chars: [...r.prompt].length,
    example: examples[i] as Example,
  }));
}

export function encodeFeatureFile(rows: readonly FeatureRow[], fingerprint: string): Buffer {
  const header: Header = { format: FORMAT, fingerprint, rows: rows.length };
  const lines = [JSON.stringify(header)];
  for (const r of rows) {
    const line: Line = {
      id: r.id,
      source: r.source,
      family: r.family,
      tier: r.tier,
      chars: r.chars,
      index: Array.from(r.example.index),
      value: Array.from(r.example.value),
      dense: Array.from(r.example.dense),
    };
    lines.push(JSON.stringify(line));
  }
  // mtime 0 and a fixed level: the same rows give the same bytes on a given zlib.
  return gzipSync(lines.join('\n') + '\n', { level: 9 });
}

export function decodeFeatureFile(bytes: Buffer): { fingerprint: string; rows: FeatureRow[] } {
  const lines = gunzipSync(bytes).toString('utf8').split('\n').filter((l) => l.trim() !== '');
  const header = JSON.parse(lines[0] ?? '{}') as Header;
  if (header.format !== FORMAT) throw new Error(`${REAL_FEATURES}: format ${String(header.format)}, expected ${FORMAT}`);
  const rows = lines.slice(1).map((text, i): FeatureRow => {
    const l = JSON.parse(text) as Line;
    if (!TIERS.includes(l.tier) || l.index.length !== l.value.length) throw new Error(`${REAL_FEATURES}: row ${i + 1} is malformed`);
    return {
      id: l.id,
      source: l.source,
      family: l.family,
      tier: l.tier,
      chars: l.chars,
      example: {
        index: Int32Array.from(l.index),
        value: Float64Array.from(l.value),
        dense: Float64Array.from(l.dense),
        label: TIERS.indexOf(l.tier),
        // Balanced by family: three sources of one family (the MCoNaLa languages) must not weigh three times.
        source: `family:${l.family}`,
        real: true,
      },
    };
  });
  if (rows.length !== header.rows) throw new Error(`${REAL_FEATURES}: ${rows.length} rows, the header says ${header.rows}`);
  return { fingerprint: header.fingerprint, rows };
}

export function writeFeatureFile(rows: readonly FeatureRow[], fingerprint: string): string {
  const path = join(repoRoot(), REAL_FEATURES);
  writeFileSync(path, encodeFeatureFile(rows, fingerprint));
  return path;
}

/** The rows a model may learn from: every source but the evaluation-only ones (Koala). */
export function trainableExamples(rows: readonly FeatureRow[]): Example[] {
  return rows.filter((r) => !EVALUATION_ONLY_SOURCES.has(r.source)).map((r) => r.example);
}

/**
 * The committed real-user features, refused when they were made by another extraction than the
 * current one (their buckets would mean other words).
 */
export function readFeatureFile(dev: readonly LabelledPrompt[]): FeatureRow[] {
  const { fingerprint, rows } = decodeFeatureFile(readFileSync(join(repoRoot(), REAL_FEATURES)));
  if (fingerprint !== extractionFingerprint(dev)) {
    throw new Error(
      `${REAL_FEATURES} was made by another feature extraction than the current one: rebuild it from the local prompts (npm run data:router)`,
    );
  }
  return rows;
}
