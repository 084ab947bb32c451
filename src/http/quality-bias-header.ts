/**
 * `x-svc-quality-bias: <0..1>`: the caller's per-request setting of svc-auto's cost/quality dial, which
 * may lower the operator's `aliases.svc-auto.quality_bias` but not raise it (src/routing/router.ts). A
 * malformed value is refused rather than ignored, so a typo cannot silently route a request on the default.
 */
import { invalidRequest } from '../openai/errors.js';

export const QUALITY_BIAS_HEADER = 'x-svc-quality-bias';

/** The header's value as a number in [0, 1], null when absent; throws a 400 when malformed. */
export function parseQualityBiasHeader(value: string | undefined): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  const bias = /^(?:0(?:\.\d+)?|1(?:\.0+)?|\.\d+)$/.test(text) ? Number(text) : NaN;
  if (!(bias >= 0 && bias <= 1)) {
    throw invalidRequest(
      `Invalid value for header '${QUALITY_BIAS_HEADER}': expected a number from 0 (cheapest) to 1 (most capable), got '${value}'.`,
      QUALITY_BIAS_HEADER,
    );
  }
  return bias;
}
