// Lint rules that guard the architecture: no `any`, and no Node built-ins outside the Node runtime and
// the SQLite driver wiring, so the core stays runnable on edge runtimes.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'bin/', 'coverage/', '.cache/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Benchmark and tool scripts are plain Node ES modules.
    files: ['bench/**/*.mjs', 'scripts/**/*.mjs', 'eval/**/*.mjs', 'test/**/*.mjs'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['src/**/*.ts'],
    // Bun's entry takes its signals from Node's `process`, which Bun implements.
    ignores: ['src/runtime/node/**', 'src/runtime/bun/**', 'src/store/sqlite/**', 'src/store/postgres/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*'], message: 'The core uses Web standards only; node: modules belong in src/runtime/node/.' }] },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'Only src/runtime/node/ reads the process environment.' },
        { name: 'Buffer', message: 'Use Uint8Array / TextEncoder: the core must run on edge runtimes.' },
      ],
    },
  },
);
