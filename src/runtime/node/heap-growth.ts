/**
 * How far V8 lets the old generation grow past what a full collection left alive before it collects again.
 *
 * Left to itself, V8 picks that factor from how fast its collections run against the program: for a gateway,
 * whose live heap is small (about 25 MB under load) and quick to mark, it picks the largest, 4. Under load
 * the state of a request in flight survives a young collection or two and is promoted (about 6.5 KB a
 * request at 128 connections), so the old generation fills with dead requests up to four times what is
 * alive before anything is freed: peak RSS at 128 busy connections about 230 MB, against about 130 MB for
 * the reference gateway of docs/performance.md, whose requests leave less behind.
 *
 * A fixed factor of 1.5 (`--heap-growing-percent=50`) collects sooner: about 170 MB at the same load, for 2
 * to 4% more CPU a request (docs/performance.md, nineteenth session). A gateway is one of many processes on
 * a host, often in a container with a memory limit, so the default holds memory down; an operator who
 * counts CPU first sets SVC_HEAP_GROWING_PERCENT=0 to give V8 back its own choice (docs/configuration.md).
 *
 * The flag is V8's, read at each collection's end, so setting it once the process runs takes effect at
 * the next full collection (Node's NODE_OPTIONS does not accept it, hence this setting).
 */
import { setFlagsFromString } from 'node:v8';
import { CliError } from './cli-output.js';

export const DEFAULT_HEAP_GROWING_PERCENT = 50;

/** The percent SVC_HEAP_GROWING_PERCENT asks for (0: V8's own choice); a usage error (exit 2) for anything else. */
export function heapGrowingPercent(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_HEAP_GROWING_PERCENT;
  const n = Number(value.trim());
  if (!/^\d+$/.test(value.trim()) || n > 1000) {
    throw new CliError(`SVC_HEAP_GROWING_PERCENT must be a whole number from 0 (V8's own choice) to 1000, got '${value}'`, 2);
  }
  return n;
}

/** Applies the setting to this process; returns the percent in force (0: V8's own choice). */
export function applyHeapGrowth(value: string | undefined): number {
  const percent = heapGrowingPercent(value);
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
  return percent;
}
