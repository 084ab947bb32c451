/**
 * Page count of a PDF without a PDF library: the largest `/Count` of a page-tree node (`/Type /Pages`),
 * the number of page objects (`/Type /Page`), and a linearized file's `/N`, whichever is largest (an
 * incrementally updated file keeps old objects; counting high is the safe side). Since PDF 1.5 most
 * writers (pdfTeX, LuaTeX, Ghostscript, qpdf) put these objects in compressed object streams, where a
 * plain scan sees nothing: those streams are inflated with the web-standard DecompressionStream, under a
 * budget so that a decompression bomb costs a few milliseconds, not the process. Null when nothing is
 * found (an encrypted file, or a broken one): the caller then bounds the file by its size.
 */
import type { Base64Bytes } from './base64-bytes.js';

/** A page count above this is not a document anyone sends inline; it is treated as unreadable. */
const MAX_PAGES = 1_000_000;
/** Inflation budget per file: object streams of ordinary documents are tens of KB each. */
const MAX_OBJECT_STREAMS = 2_000;
const MAX_COMPRESSED_BYTES = 32 * 1024 * 1024;
const MAX_INFLATED_BYTES = 32 * 1024 * 1024;

const PAGE = /\/Type\s*\/Page(?![A-Za-z0-9#])/g;
const PAGES = /\/Type\s*\/Pages(?![A-Za-z0-9#])/g;
const COUNT = /\/Count\s+(\d{1,9})(?![\d.])/;
const LINEARIZED = /\/Linearized\s[^>]*?\/N\s+(\d{1,9})/;

export interface PdfScan {
  /** From what a plain scan sees; null when it sees nothing. */
  pages: number | null;
  /** FlateDecode object streams whose content the plain scan could not see. */
  objectStreams: Uint8Array<ArrayBuffer>[];
}

export function scanPdf(bytes: Base64Bytes): PdfScan {
  const text = bytes.latin1();
  const linearized = LINEARIZED.exec(text.slice(0, 2048));
  const fromHeader = linearized ? Number(linearized[1]) : 0;
  const pages = Math.max(fromHeader, countPages(text));
  return { pages: plausible(pages), objectStreams: objectStreams(text) };
}

/** The page count, inflating object streams when the plain scan needs them. */
export async function readPdfPages(bytes: Base64Bytes): Promise<number | null> {
  const scan = scanPdf(bytes);
  if (scan.objectStreams.length === 0) return scan.pages;
  const inside = countPages(await inflateAll(scan.objectStreams));
  return plausible(Math.max(scan.pages ?? 0, inside));
}

function plausible(pages: number): number | null {
  return pages >= 1 && pages <= MAX_PAGES ? pages : null;
}

function countPages(text: string): number {
  let leaves = 0;
  for (PAGE.lastIndex = 0; PAGE.exec(text) !== null; ) leaves++;
  let tree = 0;
  PAGES.lastIndex = 0;
  for (let m = PAGES.exec(text); m !== null; m = PAGES.exec(text)) {
    const dict = enclosingDictionary(text, m.index);
    const count = COUNT.exec(dict);
    if (count) tree = Math.max(tree, Number(count[1]));
  }
  return Math.max(leaves, tree);
}

/** The `<< ... >>` around `at` (nested dictionaries skipped), looked for within a few KB either side. */
function enclosingDictionary(text: string, at: number): string {
  const SPAN = 8192;
  let depth = 0;
  let start = -1;
  for (let i = at; i > Math.max(0, at - SPAN); i--) {
    if (text.startsWith('>>', i - 1)) {
      depth++;
      i--;
    } else if (text.startsWith('<<', i - 1)) {
      if (depth === 0) {
        start = i - 1;
        break;
      }
      depth--;
      i--;
    }
  }
  if (start < 0) return text.slice(Math.max(0, at - 512), at + 512);
  depth = 0;
  const limit = Math.min(text.length, at + SPAN);
  for (let i = start; i < limit - 1; i++) {
    if (text.startsWith('<<', i)) {
      depth++;
      i++;
    } else if (text.startsWith('>>', i)) {
      depth--;
      i++;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  return text.slice(start, limit);
}

function objectStreams(text: string): Uint8Array<ArrayBuffer>[] {
  const out: Uint8Array<ArrayBuffer>[] = [];
  let total = 0;
  for (let at = text.indexOf('/ObjStm'); at >= 0 && out.length < MAX_OBJECT_STREAMS; at = text.indexOf('/ObjStm', at + 7)) {
    const dictStart = text.lastIndexOf('<<', at);
    const keyword = text.indexOf('stream', at);
    if (dictStart < 0 || keyword < 0 || keyword - at > 4096) continue;
    const dict = text.slice(dictStart, keyword);
    if (!/\/FlateDecode(?![A-Za-z])/.test(dict) || /\/Encrypt|\/Crypt/.test(dict)) continue;
    let body = keyword + 'stream'.length;
    if (text.startsWith('\r\n', body)) body += 2;
    else if (text[body] === '\n' || text[body] === '\r') body += 1;
    // A direct /Length says where the data ends; an indirect one (`/Length 12 0 R`) would need the
    // cross-reference table, so then the data runs to `endstream` (a trailing EOL inflates as junk).
    const length = /\/Length\s+(\d{1,10})(\s+\d+\s+R)?/.exec(dict);
    const end = length && length[2] === undefined ? body + Number(length[1]) : text.indexOf('endstream', body);
    if (end <= body || end > text.length) continue;
    if (total + (end - body) > MAX_COMPRESSED_BYTES) break;
    total += end - body;
    out.push(latin1Bytes(text, body, end));
    at = end;
  }
  return out;
}

function latin1Bytes(text: string, start: number, end: number): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(end - start);
  for (let i = 0; i < b.length; i++) b[i] = text.charCodeAt(start + i) & 0xff;
  return b;
}

async function inflateAll(streams: Uint8Array<ArrayBuffer>[]): Promise<string> {
  const budget = { left: MAX_INFLATED_BYTES };
  const parts: string[] = [];
  for (const s of streams) {
    if (budget.left <= 0) break;
    parts.push(await inflate(s, budget));
  }
  return parts.join('\n');
}

/** zlib-inflates one stream; junk after its end or a truncated stream keeps what came out before it. */
async function inflate(data: Uint8Array<ArrayBuffer>, budget: { left: number }): Promise<string> {
  const ds = new DecompressionStream('deflate');
  const writer = ds.writable.getWriter();
  writer.write(data).catch(() => undefined);
  writer.close().catch(() => undefined);
  const reader = ds.readable.getReader();
  const decoder = new TextDecoder('latin1');
  let out = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      budget.left -= value.length;
      out += decoder.decode(value, { stream: true });
      if (budget.left <= 0) {
        await reader.cancel().catch(() => undefined);
        break;
      }
    }
  } catch {
    // A corrupt stream ends the read; what was inflated so far still counts.
  }
  return out;
}
