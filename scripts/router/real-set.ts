/**
 * The real-user prompts: public prompts written by people (chat users, forum and issue askers, prompt
 * collections, in several languages), labelled under eval/routing/RUBRIC.md.
 *
 * Their texts are not in the repository: they stay in the public repositories they come from, at the
 * commits named in eval/routing/REAL-SOURCES.md, and `node scripts/gather-router-prompts.mjs --mirrors DIR`
 * gathers them into a local cache (REAL_PROMPTS_CACHE, not committed). What is committed is ours: the labels
 * (REAL_LABELS, with each prompt's sha256 so a rebuilt cache is checked against what was labelled) and the
 * features the router reads of each prompt (feature-file.ts), from which a clean clone trains and
 * cross-validates without the texts.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TIERS, type Tier } from '../../src/routing/auto/tier.js';
import { repoRoot, type LabelledPrompt } from './dataset.js';

export const REAL_LABELS = 'eval/routing/real-labels.jsonl';

/**
 * Sources that are scored but never trained on: the Koala test set asks not to be used for training
 * (its README), so no model, shipped or cross-validated, learns from it.
 */
export const EVALUATION_ONLY_SOURCES: ReadonlySet<string> = new Set(['koala-test']);
/**
 * Families whose texts are question titles rather than messages typed to an assistant (Stack Overflow's): a
 * register of its own, whose short texts without code words are nearly all code questions.
 */
export const TITLE_FAMILIES: ReadonlySet<string> = new Set(['qa-forum-code', 'qa-forum-code-multilingual']);
export const REAL_PROMPTS_CACHE = '.cache/router/real-prompts.jsonl';

export interface Verdict {
  tier: Tier;
  why: string;
}

/** One labelled real prompt, as committed: no text, its hash and length only. */
export interface RealLabel {
  id: string;
  source: string;
  /** The kind of place the prompt comes from; leave-one-family-out holds each family out in turn. */
  family: string;
  lang: string;
  /** sha256 (hex) of the prompt's UTF-8 bytes. */
  sha256: string;
  /** Code points, which the scorer prices. */
  chars: number;
  tier: Tier;
  why: string;
  /** The two independent passes, in order. */
  passes: [Verdict, Verdict];
  /** Where the passes disagreed: the review that decided. */
  review: Verdict | null;
}

/** One prompt of the local cache. */
export interface RealPrompt {
  id: string;
  source: string;
  family: string;
  lang: string;
  prompt: string;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function isVerdict(v: unknown): v is Verdict {
  return typeof v === 'object' && v !== null && TIERS.includes((v as Verdict).tier) && typeof (v as Verdict).why === 'string';
}

export function parseRealLabels(text: string, name: string): RealLabel[] {
  const ids = new Set<string>();
  const rows: RealLabel[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const row = JSON.parse(line) as RealLabel;
    const where = `${name}:${i + 1}`;
    if (typeof row.id !== 'string' || typeof row.source !== 'string' || typeof row.family !== 'string') throw new Error(`${where}: needs id, source, family`);
    if (!/^[0-9a-f]{64}$/.test(row.sha256) || !Number.isInteger(row.chars)) throw new Error(`${where}: needs sha256 and chars`);
    if (!TIERS.includes(row.tier) || !Array.isArray(row.passes) || row.passes.length !== 2 || !row.passes.every(isVerdict)) {
      throw new Error(`${where}: needs tier and two passes`);
    }
    const agreed = row.passes[0].tier === row.passes[1].tier;
    if (agreed ? row.tier !== row.passes[0].tier : row.review === null || !isVerdict(row.review) || row.review.tier !== row.tier) {
      throw new Error(`${where}: the tier must be the passes' when they agree, else the review's`);
    }
    if (ids.has(row.id)) throw new Error(`${where}: duplicate id ${row.id}`);
    ids.add(row.id);
    rows.push(row);
  });
  return rows;
}

export function readRealLabels(): RealLabel[] {
  return parseRealLabels(readFileSync(join(repoRoot(), REAL_LABELS), 'utf8'), REAL_LABELS);
}

export function readRealPrompts(path = join(repoRoot(), REAL_PROMPTS_CACHE)): Map<string, RealPrompt> {
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: gather the real-user prompts first (node scripts/gather-router-prompts.mjs --mirrors DIR, docs/routing.md)`);
  }
  const out = new Map<string, RealPrompt>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as RealPrompt;
    out.set(row.id, row);
  }
  return out;
}

/**
 * The labelled real prompts with their texts, checked: every label needs its prompt, unchanged since it
 * was labelled (same sha256), or the labels would be applied to other words.
 */
export function joinRealSet(labels: readonly RealLabel[], prompts: ReadonlyMap<string, RealPrompt>): LabelledPrompt[] {
  const missing: string[] = [];
  const changed: string[] = [];
  const rows: LabelledPrompt[] = [];
  for (const label of labels) {
    const p = prompts.get(label.id);
    if (p === undefined) {
      missing.push(label.id);
      continue;
    }
    if (sha256Hex(p.prompt) !== label.sha256) {
      changed.push(label.id);
      continue;
    }
    rows.push({ id: label.id, source: label.source, family: label.family, prompt: p.prompt, tier: label.tier, why: label.why });
  }
  if (missing.length > 0 || changed.length > 0) {
    throw new Error(
      `real-user prompts: ${missing.length} labelled prompts missing from the cache (${missing.slice(0, 3).join(', ')}), ` +
        `${changed.length} changed since labelled (${changed.slice(0, 3).join(', ')})`,
    );
  }
  return rows;
}
