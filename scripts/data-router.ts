/**
 * `npm run data:router [-- --prompts FILE]`: builds eval/routing/real-features.jsonl.gz from the labels
 * (eval/routing/real-labels.jsonl) and the local cache of real-user prompts, which
 * `node scripts/gather-router-prompts.mjs --mirrors DIR` fills from copies of the source repositories
 * (eval/routing/REAL-SOURCES.md). Every labelled prompt must be in the cache with the text it was labelled
 * with (its sha256), so a build never pairs a label with other words. Then retrain: `npm run train:router`.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEV_SET, readDataset, repoRoot } from './router/dataset.js';
import { extractionFingerprint, featureRows, writeFeatureFile } from './router/feature-file.js';
import { joinRealSet, readRealLabels, readRealPrompts, REAL_PROMPTS_CACHE } from './router/real-set.js';

const { values } = parseArgs({ options: { prompts: { type: 'string' } } });
const cache = values.prompts ?? join(repoRoot(), REAL_PROMPTS_CACHE);

const labels = readRealLabels();
const rows = joinRealSet(labels, readRealPrompts(cache));
const path = writeFeatureFile(featureRows(rows), extractionFingerprint(readDataset(DEV_SET)));
const families = new Map<string, number>();
for (const r of rows) families.set(r.family ?? r.source, (families.get(r.family ?? r.source) ?? 0) + 1);
console.log(`wrote ${path}: ${rows.length} prompts (${[...families].map(([f, n]) => `${f} ${n}`).join(', ')}); now npm run train:router`);
