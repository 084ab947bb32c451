/**
 * The committed weights' format: each block (hashed, dense, bias) as little-endian int16 in base64 with
 * one scale per block. 16 bits keep every weight within 1/32767 of its block's largest, far below what
 * moves a decision, and make the file small and byte-for-byte reproducible by the training script.
 * Decoding uses only `atob` and typed arrays, so it runs on Node and on edge runtimes alike.
 */
import { CLASS_COUNT, DENSE_COUNT, HASH_BITS, HASH_SIZE } from './feature-layout.js';
import type { RouterModel } from './model.js';

export interface EncodedBlock {
  scale: number;
  base64: string;
}

export interface EncodedWeights {
  format: 'svc-router-int16/1';
  hashBits: number;
  denseCount: number;
  classes: readonly string[];
  /** What the weights were trained on (file: rows), for the record. */
  trainedOn: Readonly<Record<string, number>>;
  options: Readonly<Record<string, number | boolean>>;
  hashed: EncodedBlock;
  dense: EncodedBlock;
  bias: EncodedBlock;
}

const INT16_MAX = 32767;

export function encodeBlock(values: Float32Array): EncodedBlock {
  let max = 0;
  for (const v of values) max = Math.max(max, Math.abs(v));
  // Rounded so that the scale prints (and reparses) exactly.
  const scale = max > 0 ? Number((max / INT16_MAX).toPrecision(9)) : 1;
  const bytes = new Uint8Array(values.length * 2);
  const view = new DataView(bytes.buffer);
  values.forEach((v, i) => view.setInt16(i * 2, Math.max(-INT16_MAX, Math.min(INT16_MAX, Math.round(v / scale))), true));
  let binary = '';
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i] as number);
  return { scale, base64: btoa(binary) };
}

function decodeBlock(block: EncodedBlock, length: number, name: string): Float32Array {
  const binary = atob(block.base64);
  if (binary.length !== length * 2) throw new Error(`router weights: block ${name} has ${binary.length / 2} values, expected ${length}`);
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    const lo = binary.charCodeAt(2 * i);
    const hi = binary.charCodeAt(2 * i + 1);
    const u = lo | (hi << 8);
    out[i] = (u >= 0x8000 ? u - 0x10000 : u) * block.scale;
  }
  return out;
}

/** Throws when the weights were trained for a different feature layout (a stale weights file). */
export function decodeModel(w: EncodedWeights): RouterModel {
  if (w.format !== 'svc-router-int16/1' || w.hashBits !== HASH_BITS || w.denseCount !== DENSE_COUNT) {
    throw new Error(
      `router weights do not match the feature layout (weights: ${w.hashBits} hash bits, ${w.denseCount} dense; ` +
        `code: ${HASH_BITS}, ${DENSE_COUNT}); run npm run train:router`,
    );
  }
  return {
    hashed: decodeBlock(w.hashed, HASH_SIZE * CLASS_COUNT, 'hashed'),
    dense: decodeBlock(w.dense, DENSE_COUNT * CLASS_COUNT, 'dense'),
    bias: decodeBlock(w.bias, CLASS_COUNT, 'bias'),
  };
}

/** The model as it is after an encode/decode round trip: what serving will use. */
export function quantise(model: RouterModel): RouterModel {
  const round = (values: Float32Array): Float32Array => {
    const b = encodeBlock(values);
    return decodeBlock(b, values.length, 'round-trip');
  };
  return { hashed: round(model.hashed), dense: round(model.dense), bias: round(model.bias) };
}
