/**
 * How far V8 lets the old generation grow past what a full collection left alive before it collects again.
 *
 * Left to itself, V8 picks that factor from how fast its collections run against the program, up to a
 * ceiling set by the heap's size limit: 4 for a heap allowed 2 GB or more (Node's default on a machine
 * with 8 GB or more), between 1.3 and 2 below that. For a gateway, whose live heap is small (about 25 MB
 * under load) and quick to mark, it picks the ceiling. Under load the state of a request in flight survives a
 * young collection or two and is promoted (about 6.5 KB a request at 128 connections), so with a large heap
 * the old generation fills with dead requests up to four times what is alive before anything is freed:
 * peak RSS at 128 busy connections about 240 MB, against about 130 MB for the reference gateway of
 * docs/performance.md, whose requests leave less behind.
 *
 * A fixed factor of 1.5 (`--heap-growing-percent=50`) collects sooner: about 170 MB at the same load, for 2
 * to 4% more CPU a request (docs/performance.md, nineteenth session). A gateway is one of many processes on
 * a host, so the default holds memory down; SVC_HEAP_GROWING_PERCENT=0 gives V8 back its own choice.
 *
 * Only where V8's ceiling is above it: a fixed factor replaces every factor V8 would pick, including the
 * smaller ones of a capped heap (`--max-old-space-size`, or a container's memory limit, from which Node
 * sizes the heap) and of its memory-saving modes. Under a 2 GB heap limit V8's own choice is kept, and so
 * is a factor given to node on its command line. Once applied, an idle gateway keeps 1.5 times its live
 * heap rather than the 1.1 V8's memory reducer would leave: a few MB.
 *
 * The flag is V8's, read at each collection's end, so setting it once the process runs takes effect at
 * the next full collection (Node's NODE_OPTIONS does not accept it, hence this setting).
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { CliError } from './cli-output.js';

export const DEFAULT_HEAP_GROWING_PERCENT = 50;

/** V8's heap limit from which its own growing factor may reach 4 (heap-controller.cc, MaxGrowingFactor). */
export const LARGE_HEAP_LIMIT_BYTES = 2048 * 1024 * 1024;

/** The percent SVC_HEAP_GROWING_PERCENT asks for (0: V8's own choice); a usage error (exit 2) for anything else. */
export function heapGrowingPercent(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_HEAP_GROWING_PERCENT;
  const n = Number(value.trim());
  if (!/^\d+$/.test(value.trim()) || n > 1000) {
    throw new CliError(`SVC_HEAP_GROWING_PERCENT must be a whole number from 0 (V8's own choice) to 1000, got '${value}'`, 2);
  }
  return n;
}

export interface HeapGrowthContext {
  /** V8's heap size limit in bytes (v8.getHeapStatistics().heap_size_limit). */
  heapSizeLimit: number;
  /** The options node was started with (process.execArgv). */
  execArgv: readonly string[];
}

/**
 * The percent to set: the one SVC_HEAP_GROWING_PERCENT names if set; unset, the default, unless node was
 * given the flag itself or the heap is capped below LARGE_HEAP_LIMIT_BYTES (then 0: V8's, or node's, own).
 */
export function heapGrowthToApply(value: string | undefined, context: HeapGrowthContext): number {
  const percent = heapGrowingPercent(value);
  if (value !== undefined && value.trim() !== '') return percent;
  if (context.execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return 0;
  return context.heapSizeLimit >= LARGE_HEAP_LIMIT_BYTES ? percent : 0;
}

/** Applies the setting to this process; returns the percent set (0: none, V8's own choice stands). */
export function applyHeapGrowth(value: string | undefined): number {
  const percent = heapGrowthToApply(value, { heapSizeLimit: getHeapStatistics().heap_size_limit, execArgv: process.execArgv });
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
  return percent;
}
