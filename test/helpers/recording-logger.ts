import type { Logger } from '../../src/core/logger.js';

/** A logger that keeps each line's level and message, for tests of what is logged and how loudly. */
export function recordingLogger(): Logger & { lines: [string, string][] } {
  const lines: [string, string][] = [];
  return {
    lines,
    debug: (msg) => void lines.push(['debug', msg]),
    info: (msg) => void lines.push(['info', msg]),
    warn: (msg) => void lines.push(['warn', msg]),
    error: (msg) => void lines.push(['error', msg]),
  };
}
