/**
 * 32-bit FNV-1a, fed one UTF-16 code unit at a time so that a token is hashed while it is scanned,
 * without slicing the string. Training and serving share these functions: a change here changes every
 * feature index, so it needs a retraining (`npm run train:router`).
 */

export const FNV_OFFSET = 0x811c9dc5;

export function fnvStep(hash: number, code: number): number {
  return Math.imul(hash ^ code, 0x01000193);
}

/** Combines two hashes (a bigram, a feature namespace with a token) into one, order-sensitive. */
export function mix(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h ^ b, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/**
 * A hash's bucket in a table of 2^bits for a namespace `seed`: one multiply, top bits (Fibonacci
 * hashing). Cheaper than `mix`, which matters because it runs three times per word.
 */
export function bucket(hash: number, seed: number, bits: number): number {
  return Math.imul(hash ^ seed, 0x9e3779b1) >>> (32 - bits);
}

/** The hash of a whole lower-case string, equal to the one the scanner computes token by token. */
export function hashString(text: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) h = fnvStep(h, text.charCodeAt(i));
  return h;
}
