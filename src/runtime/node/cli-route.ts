/** `svc-gateway route "<prompt>"`: svc-auto's decision for a prompt, and why, without calling anything. */
import { readFileSync } from 'node:fs';
import { explainRequest, type Evidence } from '../../routing/auto/explain.js';
import { CliError, emit } from './cli-output.js';
import { loadConfig } from './config-file.js';

const ALIAS_OF_TIER = { fast: 'svc-fast', code: 'svc-code', smart: 'svc-smart' } as const;

function qualityBias(flag: string | undefined): { value: number; source: string } {
  if (flag === undefined) {
    const value = loadConfig(process.env.SVC_CONFIG).aliases['svc-auto'].quality_bias;
    return { value, source: process.env.SVC_CONFIG ? `from ${process.env.SVC_CONFIG}` : 'default' };
  }
  const value = /^\s*(?:\d+(?:\.\d*)?|\.\d+)\s*$/.test(flag) ? Number(flag) : NaN;
  if (!(value >= 0 && value <= 1)) throw new CliError(`--quality-bias must be a number from 0 to 1, got '${flag}'`, 2);
  return { value, source: '--quality-bias' };
}

function row(e: Evidence): string {
  const n = (x: number): string => (x >= 0 ? '+' : '') + x.toFixed(2);
  return `  ${e.what.slice(0, 28).padEnd(28)} ${n(e.toward.fast).padStart(6)} ${n(e.toward.code).padStart(6)} ${n(e.toward.smart).padStart(6)}`;
}

export function routeCommand(positionals: string[], flags: { 'quality-bias'?: string }, json: boolean): void {
  // A prompt from the arguments, else from standard input (for long prompts: `svc-gateway route < prompt.txt`).
  const prompt = positionals.length > 0 ? positionals.join(' ') : process.stdin.isTTY ? '' : readFileSync(0, 'utf8');
  if (prompt.trim() === '') throw new CliError('usage: svc-gateway route "<prompt>" [--quality-bias 0..1] [--json]', 2);
  const bias = qualityBias(flags['quality-bias']);
  const x = explainRequest({ messages: [{ role: 'user', content: prompt }] }, bias.value);
  const p = x.probabilities;
  emit(
    json,
    { ...x, model: ALIAS_OF_TIER[x.decision.tier] },
    [
      `svc-auto -> ${ALIAS_OF_TIER[x.decision.tier]}  (confidence ${x.decision.confidence}; ${x.decision.reason})`,
      `quality_bias ${bias.value} (${bias.source}): leaves svc-fast above ${x.fastExitThreshold} probability of needing more`,
      `probabilities: fast ${p.fast.toFixed(3)}  code ${p.code.toFixed(3)}  smart ${p.smart.toFixed(3)}`,
      '',
      `evidence (log-odds toward     fast   code  smart)`,
      ...x.groups.slice(0, 8).map(row),
      '',
      `prompt words with the largest learned weights (before length scaling)`,
      ...x.terms.map(row),
    ].join('\n'),
  );
}
