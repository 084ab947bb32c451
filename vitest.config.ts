import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the CPUs, which on the 2-core CI machines means one test
    // file at a time (759 s against 440 s for the suite). Most files wait on child processes, sockets and
    // databases, and each PostgreSQL test uses a schema of its own, so files run side by side safely.
    maxWorkers: availableParallelism(),
  },
});
