/**
 * Runs the evaluation's own scorer (eval/routing/score.mjs, unmodified) on a set of predictions, so the
 * figures we publish are the scorer's, not a re-implementation's.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chooseTier } from '../../src/routing/auto/decision.js';
import { TIERS, type Tier } from '../../src/routing/auto/tier.js';
import { DEV_SET, repoRoot, SCORER } from './dataset.js';
import type { Probabilities } from './cross-validate.js';

export interface Metrics {
  n: number;
  accuracy: number;
  macroF1: number;
  f1: Record<string, number>;
  underRouting: number | null;
  underRoutingCount: string;
  overRouting: number | null;
  overRoutingCount: string;
  costRatio: number | null;
  oracleCostRatio: number | null;
  confusion: Record<Tier, Record<Tier, number>>;
}

export interface ScoreReport {
  overall: Metrics;
  bySource: Record<string, Metrics>;
  /** The scorer's human-readable tables. */
  text: string;
}

export function decisions(rows: readonly { id: string }[], probs: Probabilities, qualityBias: number): { id: string; tier: Tier }[] {
  return rows.map((r, i) => ({ id: r.id, tier: TIERS[chooseTier(probs[i] as Float64Array, qualityBias)] as Tier }));
}

export function score(predictions: readonly { id: string; tier: Tier }[], dataset = DEV_SET): ScoreReport {
  return runScorer(predictions, join(repoRoot(), dataset));
}

/**
 * Scores predictions on rows known by their length only (the real-user features carry no text): the
 * scorer reads a row's id, source, tier and, for the cost ratio, its prompt's length in code points, so
 * each prompt is stood in for by that many spaces.
 */
export function scoreByLength(
  predictions: readonly { id: string; tier: Tier }[],
  rows: readonly { id: string; source: string; tier: Tier; chars: number }[],
): ScoreReport {
  const dir = mkdtempSync(join(tmpdir(), 'svc-router-set-'));
  try {
    const dataset = join(dir, 'dataset.jsonl');
    writeFileSync(dataset, rows.map((r) => JSON.stringify({ id: r.id, source: r.source, tier: r.tier, prompt: ' '.repeat(r.chars) })).join('\n') + '\n');
    return runScorer(predictions, dataset);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runScorer(predictions: readonly { id: string; tier: Tier }[], datasetPath: string): ScoreReport {
  const root = repoRoot();
  const dir = mkdtempSync(join(tmpdir(), 'svc-router-'));
  try {
    const file = join(dir, 'predictions.jsonl');
    writeFileSync(file, predictions.map((p) => JSON.stringify(p)).join('\n') + '\n');
    const run = (json: boolean): string => {
      const args = [join(root, SCORER), datasetPath, file, '--strict', ...(json ? ['--json'] : [])];
      const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`score.mjs failed (${r.status}): ${r.stderr}`);
      return r.stdout;
    };
    const parsed = JSON.parse(run(true)) as { overall: Metrics; bySource: Record<string, Metrics> };
    return { overall: parsed.overall, bySource: parsed.bySource, text: run(false) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
