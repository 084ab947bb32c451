/**
 * `npm run train:router`: trains svc-auto's model on eval/routing/dev.jsonl and eval/routing/written.jsonl
 * and writes src/routing/auto/weights.generated.ts. Deterministic: a rerun writes the same bytes.
 * Cross-validated figures: `npm run eval:router`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './router/dataset.js';
import { trainShippedWeights, WEIGHTS_FILE } from './router/weights-file.js';

const started = performance.now();
const source = trainShippedWeights();
const path = join(repoRoot(), WEIGHTS_FILE);
let previous = '';
try {
  previous = readFileSync(path, 'utf8');
} catch {
  // first training
}
writeFileSync(path, source);
console.log(
  `wrote ${WEIGHTS_FILE} (${(source.length / 1024).toFixed(1)} KiB) in ${((performance.now() - started) / 1000).toFixed(1)} s: ` +
    (previous === source ? 'unchanged' : 'CHANGED, rebuild (npm run build) to serve it'),
);
