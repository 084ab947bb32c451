// Another revision of the project, built in a scratch git worktree that borrows this checkout's
// node_modules: what bench/interleaved.mjs and bench/store-interleaved.mjs compare this build with.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** REV built; returns its CLI, its dist/ directory and a cleanup that removes the worktree. */
export function buildRevision(rev) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-revision-'));
  const tree = join(dir, 'tree');
  execFileSync('git', ['-C', ROOT, 'worktree', 'add', '-q', '--detach', tree, rev]);
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
  execFileSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: tree });
  return {
    cli: join(tree, 'bin/svc-gateway.js'),
    dist: join(tree, 'dist'),
    cleanup() {
      execFileSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', tree]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
