/**
 * A full disk as SQLite really meets it: under a file-size limit (`ulimit -f`, in a child process running the
 * built store), the WAL cannot grow, so the refusal comes at a COMMIT, and the checkpointer's copy into the
 * database file fails on every tick (test/fixtures/sqlite/full-disk.mjs). The reserves the disk refused hear
 * a lasting `unavailable` (a 503 at once, src/store/sqlite/errors.ts), the books hold exactly the reserves
 * that succeeded, and the failing checkpoint is one warning, not ten a second.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../fixtures/sqlite/full-disk.mjs', import.meta.url));
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-gateway-full-disk-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Outcome {
  ok: number;
  held: number;
  refused: Record<string, number>;
  warnings: string[];
}

it('refuses at the COMMIT with a lasting `unavailable`, holds only what succeeded, and warns once of failing checkpoints', () => {
  // 1,500 KiB: room for a hundred-odd reserves, then no more.
  const out = execFileSync('bash', ['-c', 'ulimit -f 1500 && exec "$0" "$1" "$2"', process.execPath, SCRIPT, dir], { encoding: 'utf8', timeout: 60_000 });
  const outcome = JSON.parse(out.trim().split('\n').pop() as string) as Outcome;
  expect(outcome.ok).toBeGreaterThan(0);
  expect(outcome.held).toBe(outcome.ok);
  const kinds = Object.keys(outcome.refused);
  expect(kinds.length).toBeGreaterThan(0);
  for (const kind of kinds) expect(kind).toMatch(/^StoreError\/unavailable\/lasting\/SQLITE_(IOERR|FULL)/);
  expect(outcome.warnings.filter((w) => w.includes('checkpoint failed'))).toHaveLength(1);
});
