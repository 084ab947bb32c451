/**
 * Random access to the bytes of a base64 string without decoding all of it. The size of an image or the
 * chunk table of a WAV file is a few bytes near the start; a 9 MB attachment should not cost a 9 MB decode
 * to find them. Tolerant by design: a character outside the alphabet reads as zero bits and a read past
 * the end reads zeros, so a hostile or truncated payload yields a wrong number (which the readers then
 * reject as implausible), never an exception.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VALUES = new Uint8Array(128);
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i;
// The URL-safe alphabet decodes to the same bits; some clients send it.
VALUES['-'.charCodeAt(0)] = 62;
VALUES['_'.charCodeAt(0)] = 63;

const WHITESPACE = /\s/;

export class Base64Bytes {
  /** Decoded length in bytes. */
  readonly length: number;
  private readonly text: string;
  private readonly chars: number;

  constructor(base64: string) {
    // MIME-style line breaks would shift every offset; they are rare, so only then is the string copied.
    const text = WHITESPACE.test(base64) ? base64.replace(/\s+/g, '') : base64;
    let chars = text.length;
    while (chars > 0 && text.charCodeAt(chars - 1) === 61 /* '=' */) chars--;
    this.text = text;
    this.chars = chars;
    this.length = Math.floor((chars * 3) / 4);
  }

  /** Up to `count` bytes from `offset`; fewer at the end, none outside. */
  read(offset: number, count: number): Uint8Array {
    const start = Math.max(0, Math.floor(offset));
    const end = Math.min(this.length, start + Math.max(0, Math.floor(count)));
    if (end <= start) return new Uint8Array(0);
    const firstQuad = Math.floor(start / 3);
    const lastQuad = Math.floor((end - 1) / 3);
    const out = new Uint8Array((lastQuad - firstQuad + 1) * 3);
    let o = 0;
    for (let q = firstQuad; q <= lastQuad; q++) {
      const bits = (this.sextet(q * 4) << 18) | (this.sextet(q * 4 + 1) << 12) | (this.sextet(q * 4 + 2) << 6) | this.sextet(q * 4 + 3);
      out[o++] = (bits >>> 16) & 0xff;
      out[o++] = (bits >>> 8) & 0xff;
      out[o++] = bits & 0xff;
    }
    const skip = start - firstQuad * 3;
    return out.subarray(skip, skip + (end - start));
  }

  /** One byte (0 outside the data). */
  byte(offset: number): number {
    return this.read(offset, 1)[0] ?? 0;
  }

  /**
   * The bytes as a string of char codes 0-255 (one character per byte, so string offsets are byte
   * offsets), for scanning text formats such as PDF with the engine's native string search.
   */
  latin1(): string {
    // atob is native and an order of magnitude faster than the loop below; it refuses URL-safe or
    // malformed input, which then takes the tolerant path.
    if (typeof atob === 'function') {
      try {
        return atob(this.chars === this.text.length ? this.text : this.text.slice(0, this.chars)).slice(0, this.length);
      } catch {
        // fall through
      }
    }
    const parts: string[] = [];
    const CHUNK = 16 * 1024;
    for (let at = 0; at < this.length; at += CHUNK) {
      parts.push(String.fromCharCode(...this.read(at, CHUNK)));
    }
    return parts.join('');
  }

  private sextet(index: number): number {
    if (index >= this.chars) return 0;
    const code = this.text.charCodeAt(index);
    return code < 128 ? (VALUES[code] ?? 0) : 0;
  }
}

/** Big-endian and little-endian integers from a byte array (0 past its end). */
export function u16be(b: Uint8Array, i: number): number {
  return ((b[i] ?? 0) << 8) | (b[i + 1] ?? 0);
}
export function u16le(b: Uint8Array, i: number): number {
  return (b[i] ?? 0) | ((b[i + 1] ?? 0) << 8);
}
export function u24le(b: Uint8Array, i: number): number {
  return (b[i] ?? 0) | ((b[i + 1] ?? 0) << 8) | ((b[i + 2] ?? 0) << 16);
}
export function u32be(b: Uint8Array, i: number): number {
  return (((b[i] ?? 0) << 24) >>> 0) + (((b[i + 1] ?? 0) << 16) | ((b[i + 2] ?? 0) << 8) | (b[i + 3] ?? 0));
}
export function u32le(b: Uint8Array, i: number): number {
  return (((b[i + 3] ?? 0) << 24) >>> 0) + (((b[i + 2] ?? 0) << 16) | ((b[i + 1] ?? 0) << 8) | (b[i] ?? 0));
}
/** Four bytes as ASCII, for chunk and box names. */
export function fourcc(b: Uint8Array, i: number): string {
  return String.fromCharCode(b[i] ?? 0, b[i + 1] ?? 0, b[i + 2] ?? 0, b[i + 3] ?? 0);
}
