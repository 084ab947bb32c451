/**
 * One pass over a stretch of text that emits every feature the router uses: hashed word unigrams and
 * bigrams, word stems (first five characters), "shape" 4-grams (letters -> a, digits -> 0,
 * punctuation kept: `def f(x):` -> `a a(a):`, `3x^2 + 1` -> `0a^0 + 0`) and the counts behind the dense
 * features. It reads the string in place (no slicing, no lower-casing copy) into a FeatureBuffer
 * allocated once, so the hot path allocates nothing. Two modes: serving sums each feature's weights as it
 * is found (`buf.weights` set); training and explanations record the features (`buf.weights` null).
 */
import { CLASS_COUNT, DENSE_COUNT, HASH_BITS, HASH_GROUP_COUNT, HASH_MASK, HashGroup } from './feature-layout.js';
import { bucket, FNV_OFFSET, fnvStep, hashString, mix } from './hashing.js';
import { Lex, LEX_COUNT, lexMask, PHRASE_START, phraseHash, STOP_WORD } from './lexicon.js';

/**
 * Room for the recorded features of one request. features.ts reads at most 3,072 characters and a
 * character yields at most ~2.5 features (one shape 4-gram, and a word's unigram, bigram and stem), so
 * this is never reached; the guard in `record` is a backstop.
 */
export const BUFFER_CAPACITY = 32_768;

/** Where a stretch of text comes from: the request's last user turn, or its context. */
export const Region = { Main: 0, Context: 1 } as const;
export type Region = (typeof Region)[keyof typeof Region];

/** Raw counts per region; turned into dense features once the whole request has been read. */
export const Count = {
  Chars: 0,
  Fence: 1,
  InlineCode: 2,
  Indent: 3,
  CodePunct: 4,
  Identifier: 5,
  Call: 6,
  Digits: 7,
  Numbers: 8,
  Arithmetic: 9,
  MathSymbol: 10,
  Latex: 11,
  Money: 12,
  Percent: 13,
  Questions: 14,
  CodeLine: 15,
  Block: 16,
  Lexicon: 17,
} as const;
export const COUNT_SIZE = Count.Lexicon + LEX_COUNT;

export class FeatureBuffer {
  /** Serving mode: the model's hashed weights, summed into `sums` as features are found. */
  weights: Float32Array | null = null;
  /** Recording mode: the features, in order (index, scaled value, group, region). */
  readonly index = new Int32Array(BUFFER_CAPACITY);
  readonly value = new Float64Array(BUFFER_CAPACITY);
  readonly group = new Uint8Array(BUFFER_CAPACITY);
  readonly region = new Uint8Array(BUFFER_CAPACITY);
  count = 0;
  /** Features found per (region * HASH_GROUP_COUNT + group). */
  readonly found = new Float64Array(2 * HASH_GROUP_COUNT);
  /** Serving mode: summed weights per (region * HASH_GROUP_COUNT + group) * CLASS_COUNT + tier. */
  readonly sums = new Float64Array(2 * HASH_GROUP_COUNT * CLASS_COUNT);
  /** Per (region, group): the value of one feature, region weight / sqrt(features found). */
  readonly scale = new Float64Array(2 * HASH_GROUP_COUNT);
  readonly dense = new Float64Array(DENSE_COUNT);
  /** counts[region * COUNT_SIZE + Count.x] */
  readonly counts = new Float64Array(2 * COUNT_SIZE);

  reset(): void {
    this.count = 0;
    this.found.fill(0);
    this.sums.fill(0);
    this.dense.fill(0);
    this.counts.fill(0);
  }
}

const SEED_UNIGRAM = hashString('uni');
const SEED_BIGRAM = hashString('bi');
const SEED_STEM = hashString('stem');
const SEED_SHAPE4 = hashString('shape4');
/** Numbers are hashed by their digit count, not their value: "17 apples" and "42 apples" look alike. */
const NUMBER_TOKENS = [1, 2, 3, 4].map((n) => hashString(`<number:${n}>`));

const STEM_LENGTH = 5;

// Layout constants copied into this module: the hot loops read local constants, not imported bindings
// (which some loaders, vitest's among them, turn into property reads on a namespace object).
const BITS = HASH_BITS;
const WORDS = HashGroup.Words;
const STEMS = HashGroup.Stems;
const SHAPES = HashGroup.Shapes;
const LISTS = LEX_COUNT;
if (CLASS_COUNT !== 3) throw new Error('the scanner sums weights for three tiers');

function shape4(s3: number, s2: number, s1: number, sym: number): number {
  return mix(SEED_SHAPE4, (s3 << 21) | (s2 << 14) | (s1 << 7) | sym) & HASH_MASK;
}

// Shape symbols: ASCII punctuation keeps its own code (33..126 minus letters and digits).
const S_LETTER = 1;
const S_DIGIT = 2;
const S_SPACE = 3;
const S_NEWLINE = 4;
const S_INDENT = 5;
const S_MATH = 6;
const S_OTHER = 7;

/** The two 4-grams of running prose: "a a a" then a letter, and " a a" then a blank. */
const PROSE_LETTER = shape4(S_SPACE, S_LETTER, S_SPACE, S_LETTER);
const PROSE_SPACE = shape4(S_LETTER, S_SPACE, S_LETTER, S_SPACE);

const CH_TAB = 9;
const CH_NL = 10;
const CH_CR = 13;
const CH_SPACE = 32;
const CH_DOLLAR = 36;
const CH_DOT = 46;
const CH_QUOTE = 34;
const CH_PERCENT = 37;
const CH_LPAREN = 40;
const CH_QUESTION = 63;
const CH_BACKSLASH = 92;
const CH_CARET = 94;
const CH_UNDERSCORE = 95;
const CH_BACKTICK = 96;

function isMathSymbol(c: number): boolean {
  return (
    c === 0xb1 || c === 0xd7 || c === 0xf7 || c === 0xb2 || c === 0xb3 || c === 0xb9 ||
    (c >= 0xbc && c <= 0xbe) ||
    (c >= 0x391 && c <= 0x3c9) || // Greek letters: variables and constants in English prompts
    (c >= 0x2070 && c <= 0x209f) ||
    (c >= 0x2150 && c <= 0x21ff) ||
    (c >= 0x2200 && c <= 0x22ff) ||
    (c >= 0x27c0 && c <= 0x27ef) ||
    (c >= 0x2a00 && c <= 0x2aff)
  );
}

// What an ASCII character is to a word, and its lower-case form, by table: one read each per character.
const K_NONE = 0;
const K_LOWER = 1;
const K_UPPER = 2;
const K_DIGIT = 3;
const K_UNDERSCORE = 4;
/** Any word character beyond ASCII. */
const K_OTHER = 5;
const ASCII_KIND = new Uint8Array(128);
const ASCII_FOLD = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  ASCII_KIND[c] =
    c >= 97 && c <= 122 ? K_LOWER : c >= 65 && c <= 90 ? K_UPPER : c >= 48 && c <= 57 ? K_DIGIT : c === CH_UNDERSCORE ? K_UNDERSCORE : K_NONE;
  ASCII_FOLD[c] = c >= 65 && c <= 90 ? c + 32 : c;
}

function isLetter(c: number): boolean {
  if (c < 0x80) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === CH_UNDERSCORE;
  if (c < 0xc0 || c === 0xd7 || c === 0xf7) return false;
  if (c >= 0x2000 && c <= 0x2bff) return false; // punctuation, symbols, arrows, math
  // CJK punctuation, but not the iteration and closing marks 々 〆 〇, which are parts of words; and the
  // katakana middle dot ・, which separates words.
  if (c >= 0x3000 && c <= 0x303f) return c >= 0x3005 && c <= 0x3007;
  if (c === 0x30fb) return false;
  // Full-width punctuation (full-width digits and Latin letters stay letters).
  if (c >= 0xff00 && c <= 0xff65) return (c >= 0xff10 && c <= 0xff19) || (c >= 0xff21 && c <= 0xff3a) || (c >= 0xff41 && c <= 0xff5a);
  if (c >= 0xd800 && c <= 0xdfff) return false; // emoji and other astral symbols
  return !isMathSymbol(c);
}

/**
 * Kana and Han ideographs: Chinese and Japanese put no spaces between words, so each of these characters
 * is read as a word of its own (its bigrams are the pairs of characters), as segmentation-free CJK text
 * classifiers do; otherwise a whole clause would be one token never seen twice.
 */
function isIdeograph(c: number): boolean {
  return (
    (c >= 0x3040 && c <= 0x30ff) ||
    (c >= 0x3400 && c <= 0x4dbf) ||
    (c >= 0x4e00 && c <= 0x9fff) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0x3005 && c <= 0x3007) ||
    (c >= 0xff66 && c <= 0xff9f) // half-width katakana
  );
}

/** Full-width digits and Latin letters (Ｐｙｔｈｏｎ, ２０２４) are read as their ASCII forms. */
const FULL_WIDTH_OFFSET = 0xfee0;

function isLowerAscii(c: number): boolean {
  return c >= 97 && c <= 122;
}

function isAsciiWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === CH_UNDERSCORE;
}

const TOP_LEVEL_DOMAINS = new Set(['com', 'org', 'net', 'edu', 'gov', 'io', 'co', 'uk', 'de', 'fr', 'ru', 'ai', 'app', 'dev']);

/** Whether the lower-case word at text[from..] is a top-level domain ending there (`com` in `youtube.com`). */
function isTopLevelDomain(text: string, from: number, end: number): boolean {
  let to = from;
  while (to < end && to - from <= 3 && isLowerAscii(text.charCodeAt(to))) to++;
  if (to < end && isAsciiWordChar(text.charCodeAt(to))) return false;
  return TOP_LEVEL_DOMAINS.has(text.slice(from, to));
}

/** Lower-cases ASCII, Latin-1 and Cyrillic letters without allocating. */
function fold(c: number): number {
  if (c >= 65 && c <= 90) return c + 32;
  if (c >= 0xc0 && c <= 0xde && c !== 0xd7) return c + 32;
  if (c >= 0x410 && c <= 0x42f) return c + 32; // А-Я
  if (c >= 0x400 && c <= 0x40f) return c + 80; // Ѐ-Џ (Ё)
  return c;
}

function isArithmeticOperator(c: number): boolean {
  return c === 43 || c === 45 || c === 42 || c === 47 || c === 61 || c === 60 || c === 62 || c === CH_CARET ||
    c === 0xd7 || c === 0xf7;
}

/**
 * Scanner state lives in fields so that scanning allocates nothing; one instance is reused (callers are
 * synchronous, so a module-level instance is safe).
 */
export class Scanner {
  private buf!: FeatureBuffer;
  private region: Region = Region.Main;
  private countBase = 0;
  private slotBase = 0;

  // previous word, for bigrams and two-word phrases
  private prevWord = 0;
  private prevLex = 0;
  private hasPrevWord = false;
  // shape stream: the last three symbols
  private s1 = 0;
  private s2 = 0;
  private s3 = 0;
  private proseEndingInLetter = 0;
  private proseEndingInSpace = 0;
  private atLineStart = true;
  private lineIndent = 0;
  // the current line: whether it has content and code punctuation; whether the previous one opened a block
  private lineHasContent = false;
  private lineHasSyntax = false;
  private lineHasLatex = false;
  private lineInQuotes = false;
  private lineIndentOfLine = 0;
  private previousOpens = false;
  private previousIndent = 0;
  private backticks = 0;
  /** 0: nothing, 1: an operand was just seen, 2: operand then operator. */
  private arith = 0;
  private lastNonSpace = 0;
  private lastWordLength = 0;

  begin(buf: FeatureBuffer, region: Region): void {
    this.buf = buf;
    this.region = region;
    this.countBase = region * COUNT_SIZE;
    this.slotBase = region * HASH_GROUP_COUNT;
  }

  /** Reads text[start, end) as one segment: words and n-grams do not continue across segments. */
  scan(text: string, start: number, end: number): void {
    this.resetSegment();
    const counts = this.buf.counts;
    const base = this.countBase;
    counts[base + Count.Chars] = (counts[base + Count.Chars] as number) + (end - start);
    let i = start;
    while (i < end) {
      let raw = text.charCodeAt(i);
      if (raw < 128 ? ASCII_KIND[raw] !== K_NONE : isLetter(raw)) {
        // A word, read in a tight loop on locals: most characters of a prompt are letters.
        if (this.backticks > 0) this.flushBackticks();
        if (this.atLineStart) this.lineStart();
        let hash = FNV_OFFSET;
        let length = 0;
        let digits = 0;
        let stem = 0;
        let underscore = false;
        let camel = false;
        let previousKind = K_NONE;
        let symbol = 0;
        let ideographic = false;
        for (;;) {
          let kind: number;
          let c: number;
          let ideograph = false;
          if (raw < 128) {
            kind = ASCII_KIND[raw] as number;
            c = ASCII_FOLD[raw] as number;
          } else if (raw >= 0xff10 && raw <= 0xff5a) {
            // Only full-width digits and letters get here (isLetter refuses the punctuation between them).
            kind = ASCII_KIND[raw - FULL_WIDTH_OFFSET] as number;
            c = ASCII_FOLD[raw - FULL_WIDTH_OFFSET] as number;
          } else {
            kind = K_OTHER;
            c = fold(raw);
            ideograph = isIdeograph(raw);
          }
          if (kind === K_DIGIT) digits++;
          else if (kind === K_UPPER) camel ||= previousKind === K_LOWER;
          else if (kind === K_UNDERSCORE) underscore ||= length > 0;
          previousKind = kind;
          hash = Math.imul(hash ^ c, 0x01000193);
          if (++length === STEM_LENGTH) stem = hash;
          const sym = kind === K_DIGIT ? S_DIGIT : S_LETTER;
          if (sym !== symbol) {
            this.shape(sym);
            symbol = sym;
          }
          if (++i >= end) {
            raw = CH_SPACE;
            break;
          }
          raw = text.charCodeAt(i);
          ideographic = ideograph;
          if (ideograph || (raw < 128 ? ASCII_KIND[raw] === K_NONE : !isLetter(raw) || isIdeograph(raw))) break;
        }
        if (digits > 0) this.add(Count.Digits, digits);
        this.endWord(hash, length, digits, stem, underscore, camel, raw, ideographic);
        continue;
      }
      if (raw === CH_BACKTICK) this.backticks++;
      else if (this.backticks > 0) this.flushBackticks();
      if (raw === CH_SPACE && !this.atLineStart) this.shape(S_SPACE); // the common case, inlined
      else this.symbol(raw, text, i, end);
      i++;
    }
    if (this.backticks > 0) this.flushBackticks();
    this.endLine();
    this.flushProse();
    this.flushSums();
  }

  private resetSegment(): void {
    this.hasPrevWord = false;
    this.s1 = this.s2 = this.s3 = S_NEWLINE;
    this.atLineStart = true;
    this.lineIndent = 0;
    this.lineHasContent = false;
    this.lineHasSyntax = false;
    this.lineHasLatex = false;
    this.lineInQuotes = false;
    this.previousOpens = false;
    this.previousIndent = 0;
    this.backticks = 0;
    this.arith = 0;
    this.lastNonSpace = 0;
  }

  private add(k: number, amount = 1): void {
    const counts = this.buf.counts;
    const at = this.countBase + k;
    counts[at] = (counts[at] as number) + amount;
  }

  // Serving mode: the weights found so far in this segment, per group and tier, in fields (flushed into
  // the buffer at the end of the segment), which is cheaper than typed-array updates per feature.
  private words0 = 0;
  private words1 = 0;
  private words2 = 0;
  private wordsFound = 0;
  private stems0 = 0;
  private stems1 = 0;
  private stems2 = 0;
  private stemsFound = 0;
  private shapes0 = 0;
  private shapes1 = 0;
  private shapes2 = 0;
  private shapesFound = 0;

  private emitWord(index: number): void {
    const w = this.buf.weights;
    if (w === null) return this.record(index, WORDS);
    const f = index * 3;
    this.words0 += w[f] as number;
    this.words1 += w[f + 1] as number;
    this.words2 += w[f + 2] as number;
    this.wordsFound++;
  }

  private emitStem(index: number): void {
    const w = this.buf.weights;
    if (w === null) return this.record(index, STEMS);
    const f = index * 3;
    this.stems0 += w[f] as number;
    this.stems1 += w[f + 1] as number;
    this.stems2 += w[f + 2] as number;
    this.stemsFound++;
  }

  private emitShape(index: number): void {
    const w = this.buf.weights;
    if (w === null) return this.record(index, SHAPES);
    const f = index * 3;
    this.shapes0 += w[f] as number;
    this.shapes1 += w[f + 1] as number;
    this.shapes2 += w[f + 2] as number;
    this.shapesFound++;
  }

  private record(index: number, group: number): void {
    const buf = this.buf;
    if (buf.count >= BUFFER_CAPACITY) return;
    const slot = this.slotBase + group;
    buf.found[slot] = (buf.found[slot] as number) + 1;
    buf.index[buf.count] = index;
    buf.group[buf.count] = group;
    buf.region[buf.count] = this.region;
    buf.count++;
  }

  /** Serving mode: adds the segment's sums into the buffer's, for this region. */
  private flushSums(): void {
    const buf = this.buf;
    if (buf.weights === null) return;
    this.addToSlot(WORDS, this.wordsFound, this.words0, this.words1, this.words2);
    this.addToSlot(STEMS, this.stemsFound, this.stems0, this.stems1, this.stems2);
    this.addToSlot(SHAPES, this.shapesFound, this.shapes0, this.shapes1, this.shapes2);
    this.words0 = this.words1 = this.words2 = this.wordsFound = 0;
    this.stems0 = this.stems1 = this.stems2 = this.stemsFound = 0;
    this.shapes0 = this.shapes1 = this.shapes2 = this.shapesFound = 0;
  }

  private addToSlot(group: number, found: number, s0: number, s1: number, s2: number): void {
    if (found === 0) return;
    const buf = this.buf;
    const slot = this.slotBase + group;
    const s = slot * 3;
    buf.found[slot] = (buf.found[slot] as number) + found;
    buf.sums[s] = (buf.sums[s] as number) + s0;
    buf.sums[s + 1] = (buf.sums[s + 1] as number) + s1;
    buf.sums[s + 2] = (buf.sums[s + 2] as number) + s2;
  }

  private endWord(
    hash: number,
    length: number,
    digits: number,
    stem: number,
    underscore: boolean,
    camel: boolean,
    next: number,
    ideographic: boolean,
  ): void {
    const isNumber = digits === length;
    const token = isNumber ? (NUMBER_TOKENS[Math.min(length, 4) - 1] as number) : hash;
    const own = lexMask(token);
    let lex = own;
    if ((own & STOP_WORD) === 0) this.emitWord(bucket(token, SEED_UNIGRAM, BITS));
    if (this.hasPrevWord) {
      const phrase = phraseHash(this.prevWord, token);
      this.emitWord(bucket(phrase, SEED_BIGRAM, BITS));
      if ((this.prevLex & PHRASE_START) !== 0) lex |= lexMask(phrase);
    }
    if (length > STEM_LENGTH && !isNumber) this.emitStem(bucket(stem, SEED_STEM, BITS));
    this.prevWord = token;
    this.prevLex = own;
    this.hasPrevWord = true;
    lex &= ~(STOP_WORD | PHRASE_START);
    if (lex !== 0) {
      for (let l = 0; l < LISTS; l++) if (lex & (1 << l)) this.add(Count.Lexicon + l);
    }
    if (isNumber) this.add(Count.Numbers);
    if ((underscore && length > 2) || camel) this.add(Count.Identifier);
    if (next === CH_LPAREN && !isNumber) this.add(Count.Call);
    // An operand is a number or a one- or two-character token such as x, 2x or n1 (not a CJK character,
    // which is a word of its own).
    if (isNumber || (length <= 2 && !ideographic)) {
      if (this.arith === 2) this.add(Count.Arithmetic);
      this.arith = 1;
    } else {
      this.arith = 0;
    }
    this.lastNonSpace = isNumber ? S_DIGIT : S_LETTER;
    this.lastWordLength = length;
  }

  private symbol(c: number, text: string, i: number, end: number): void {
    if (c === CH_NL || c === CH_CR) {
      this.endLine();
      this.atLineStart = true;
      this.lineIndent = 0;
      this.shape(S_NEWLINE);
      return;
    }
    if (c === CH_SPACE || c === CH_TAB) {
      if (this.atLineStart) {
        this.lineIndent += c === CH_TAB ? 4 : 1;
        return;
      }
      this.shape(S_SPACE);
      return;
    }
    if (this.atLineStart) this.lineStart();
    if (c === CH_QUESTION) this.add(Count.Questions);
    // Member access (`row.total`, `df.head`, `os.path`): a word, a dot and a lower-case word with no space,
    // which prose writes only by mistake ("e.g." has one-letter parts, a sentence a space after its dot).
    // A domain name (`youtube.com`) is not code.
    if (c === CH_DOT && this.lastNonSpace === S_LETTER && this.lastWordLength >= 2 && i > 0 && i + 2 < end && isAsciiWordChar(text.charCodeAt(i - 1))) {
      if (isLowerAscii(text.charCodeAt(i + 1)) && isLowerAscii(text.charCodeAt(i + 2)) && !isTopLevelDomain(text, i + 1, end)) {
        this.add(Count.Identifier);
      }
    }
    if (c === CH_QUOTE) this.lineInQuotes = !this.lineInQuotes;
    if (c === 123 || c === 125 || c === 59) this.add(Count.CodePunct);
    if (c === 40 || c === 41 || c === 91 || c === 93 || c === 123 || c === 125 || c === 61 || c === 59) this.lineHasSyntax = true;
    if (c === CH_BACKSLASH && i + 1 < end && isLetter(text.charCodeAt(i + 1))) {
      this.add(Count.Latex);
      // A command of two letters or more (`\frac`, `\sum`) outside a quoted string, not an escape (`\n`,
      // `"\nTotal"`).
      if (i + 2 < end && isLetter(text.charCodeAt(i + 2)) && !this.lineInQuotes) this.lineHasLatex = true;
    }
    if ((c === CH_DOLLAR || c === 0x20ac || c === 0xa3) && i + 1 < end) {
      const n = text.charCodeAt(i + 1);
      if (n >= 48 && n <= 57) this.add(Count.Money);
    }
    if (c === CH_PERCENT && this.lastNonSpace === S_DIGIT) this.add(Count.Percent);
    const math = isMathSymbol(c);
    if (math || c === CH_CARET) this.add(Count.MathSymbol);
    if (isArithmeticOperator(c) || math) {
      this.arith = this.arith === 1 ? 2 : 0;
    } else if (c !== 40 && c !== 41) {
      this.arith = 0;
    }
    this.lastNonSpace = c;
    this.shape(c < 0x80 ? c : math ? S_MATH : S_OTHER);
  }

  /**
   * Code has a line shape prose rarely has: lines that end in `{ } ; )`, or in `:` after brackets or `=`
   * (`def f(x):`), and a line ending in `:` or `{` followed by a more indented one (a block).
   */
  private endLine(): void {
    if (!this.lineHasContent) return;
    const last = this.lastNonSpace;
    // A line of LaTeX (`\frac{a}{b}`, `$f(x)$`) ends in braces and brackets too, and is mathematics.
    const code = !this.lineHasLatex;
    if (code && (last === 123 || last === 125 || last === 59 || last === 41 || (last === 58 && this.lineHasSyntax))) this.add(Count.CodeLine);
    this.previousOpens = code && (last === 58 || last === 123);
    this.previousIndent = this.lineIndentOfLine;
    this.lineHasContent = false;
    this.lineHasSyntax = false;
    this.lineHasLatex = false;
    this.lineInQuotes = false;
  }

  private lineStart(): void {
    this.atLineStart = false;
    this.lineHasContent = true;
    this.lineIndentOfLine = this.lineIndent;
    if (this.previousOpens && this.lineIndent > this.previousIndent) this.add(Count.Block);
    this.previousOpens = false;
    if (this.lineIndent >= 2) {
      this.add(Count.Indent);
      this.shape(S_INDENT);
    }
  }

  private flushBackticks(): void {
    if (this.backticks >= 3) this.add(Count.Fence);
    else this.add(Count.InlineCode, 0.5); // a pair of single backticks is one inline span
    this.backticks = 0;
  }

  private shape(sym: number): void {
    // Runs of letters, digits or blanks collapse to one symbol; punctuation runs (`==`, `))`) are kept.
    // 4-grams only: 3-grams added nothing in cross-validation and cost a third of the scan.
    if (sym === this.s1 && sym <= S_INDENT) return;
    // Running prose is one alternation, "a a a a": by far the most frequent 4-gram. When serving, it is
    // counted and its weights added once per segment (the same sum, a third of the work).
    if (
      this.buf.weights !== null &&
      (sym === S_LETTER || sym === S_SPACE) &&
      this.s1 + sym === S_LETTER + S_SPACE &&
      this.s2 === sym &&
      this.s3 === this.s1
    ) {
      if (sym === S_LETTER) this.proseEndingInLetter++;
      else this.proseEndingInSpace++;
      this.shift(sym);
      return;
    }
    this.emitShape(shape4(this.s3, this.s2, this.s1, sym));
    this.shift(sym);
  }

  private flushProse(): void {
    if (this.proseEndingInLetter > 0) this.addRepeated(PROSE_LETTER, this.proseEndingInLetter);
    if (this.proseEndingInSpace > 0) this.addRepeated(PROSE_SPACE, this.proseEndingInSpace);
    this.proseEndingInLetter = 0;
    this.proseEndingInSpace = 0;
  }

  /** Serving mode: `n` occurrences of shape feature `index` at once. */
  private addRepeated(index: number, n: number): void {
    const w = this.buf.weights as Float32Array;
    const f = index * 3;
    this.shapes0 += n * (w[f] as number);
    this.shapes1 += n * (w[f + 1] as number);
    this.shapes2 += n * (w[f + 2] as number);
    this.shapesFound += n;
  }

  private shift(sym: number): void {
    this.s3 = this.s2;
    this.s2 = this.s1;
    this.s1 = sym;
  }
}

/** Lexicon counts of a region, readable by name (used by tests and the explanation). */
export function lexiconCount(buf: FeatureBuffer, region: Region, lex: Lex): number {
  return buf.counts[region * COUNT_SIZE + Count.Lexicon + lex] as number;
}

/** The token hash the scanner computes for one word (for explanations; not used on the hot path). */
export function tokenHashOf(word: string): number {
  let h = FNV_OFFSET;
  let digits = 0;
  for (let i = 0; i < word.length; i++) {
    const raw = word.charCodeAt(i);
    const c = fold(raw >= 0xff10 && raw <= 0xff5a ? raw - FULL_WIDTH_OFFSET : raw);
    if (c >= 48 && c <= 57) digits++;
    h = fnvStep(h, c);
  }
  return digits === word.length ? (NUMBER_TOKENS[Math.min(word.length, 4) - 1] as number) : h;
}

export function unigramIndex(token: number): number {
  return bucket(token, SEED_UNIGRAM, HASH_BITS);
}

export function bigramIndex(previous: number, token: number): number {
  return bucket(phraseHash(previous, token), SEED_BIGRAM, HASH_BITS);
}

/** Whether the scanner reads this UTF-16 code unit as part of a word. */
function isWordChar(c: number): boolean {
  return isLetter(c) || (c >= 48 && c <= 57);
}

/**
 * The words the scanner reads in a text, as strings, split by the same rules (a kana or an ideograph is a
 * word of its own); for explanations, not used on the hot path.
 */
export function wordsOf(text: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : CH_SPACE;
    const inWord = isWordChar(c);
    if (start >= 0 && (!inWord || isIdeograph(c) || isIdeograph(text.charCodeAt(i - 1)))) {
      out.push(text.slice(start, i));
      start = -1;
    }
    if (inWord && start < 0) start = i;
  }
  return out;
}
