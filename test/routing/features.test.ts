/**
 * The router's features on prompts that fool surface rules: code inside prose, a word problem without a
 * digit, a one-line "prove", math notation, non-Latin text; and the reading rules: caps, context weight,
 * structure, and that serving (weights summed on the fly) scores exactly like training (features listed).
 */
import { describe, expect, it } from 'vitest';
import { CLASS_COUNT, Dense, GROUP_COUNT } from '../../src/routing/auto/feature-layout.js';
import { CONTEXT_WEIGHT, extractFeatures, MAIN_HEAD_CHARS, MAIN_TAIL_CHARS, type RoutableRequest } from '../../src/routing/auto/features.js';
import { Lex } from '../../src/routing/auto/lexicon.js';
import { scoreFeatures } from '../../src/routing/auto/model.js';
import { routerModel } from '../../src/routing/auto/classifier.js';
import { Count, COUNT_SIZE, FeatureBuffer, lexiconCount, Region, tokenHashOf, unigramIndex, wordsOf } from '../../src/routing/auto/scanner.js';

function features(request: RoutableRequest | string): FeatureBuffer {
  const buf = new FeatureBuffer();
  extractFeatures(typeof request === 'string' ? { messages: [{ role: 'user', content: request }] } : request, buf);
  return buf;
}

const main = (buf: FeatureBuffer, c: number): number => buf.counts[Region.Main * COUNT_SIZE + c] as number;
const context = (buf: FeatureBuffer, c: number): number => buf.counts[Region.Context * COUNT_SIZE + c] as number;

describe('router features', () => {
  it('finds code inside prose: a fence, indentation, identifiers, calls and keywords', () => {
    const buf = features(
      'Hi! My manager asked me to look at this before Friday, no idea why it fails:\n\n```python\ndef load_user(user_id):\n    row = db.fetch_one(user_id)\n    return row["name"]\n```\nAny thoughts? Thanks a lot.',
    );
    expect(main(buf, Count.Fence)).toBe(2);
    expect(main(buf, Count.Indent)).toBe(2);
    expect(main(buf, Count.Identifier)).toBeGreaterThanOrEqual(2); // load_user, user_id, fetch_one
    expect(main(buf, Count.Call)).toBeGreaterThanOrEqual(2); // load_user(, fetch_one(
    expect(lexiconCount(buf, Region.Main, Lex.Keyword)).toBeGreaterThanOrEqual(2); // def, return
    expect(buf.dense[Dense.Fence]).toBe(1);
  });

  it('finds inline code and camelCase in a one-line question', () => {
    const buf = features('why does `items.forEach(x => total += x)` give NaN in getTotal?');
    expect(main(buf, Count.InlineCode)).toBe(1);
    expect(main(buf, Count.Call)).toBe(1);
    expect(main(buf, Count.Identifier)).toBe(4); // forEach, NaN, getTotal, and the member access items.forEach
  });

  it('sees a word problem without a single digit', () => {
    const buf = features(
      'Alice has twice as many marbles as Bob, and together they have a dozen. How many marbles does Bob have?',
    );
    expect(main(buf, Count.Digits)).toBe(0);
    expect(buf.dense[Dense.DigitShare]).toBe(0);
    expect(lexiconCount(buf, Region.Main, Lex.NumberWord)).toBeGreaterThanOrEqual(2); // twice, dozen, as many
    expect(lexiconCount(buf, Region.Main, Lex.Math)).toBeGreaterThanOrEqual(1); // how many
  });

  it('sees the one word that matters in a one-line request to prove', () => {
    const buf = features('Prove it.');
    expect(lexiconCount(buf, Region.Main, Lex.Proof)).toBe(1);
    expect(buf.dense[Dense.Lexicon + Lex.Proof]).toBeCloseTo(Math.log(2));
  });

  it('counts math notation: arithmetic between operands, LaTeX, unicode symbols, money and percentages', () => {
    const buf = features('If 3x + 2 = 11 and y^2 = 16, is $\\frac{x}{y} ≤ √2? A $40 toy rose 80%.');
    expect(main(buf, Count.Arithmetic)).toBeGreaterThanOrEqual(3); // 3x + 2, 2 = 11, y^2, 2 = 16
    expect(main(buf, Count.Latex)).toBe(1);
    expect(main(buf, Count.MathSymbol)).toBeGreaterThanOrEqual(3); // ^, ≤, √
    expect(main(buf, Count.Money)).toBe(1);
    expect(main(buf, Count.Percent)).toBe(1);
  });

  it('does not take prose hyphens and dates for arithmetic', () => {
    const buf = features('The well-known author wrote a long, thoughtful letter to her old friend last spring.');
    expect(main(buf, Count.Arithmetic)).toBe(0);
    expect(main(buf, Count.MathSymbol)).toBe(0);
  });

  it('reads member access as code, and prose around a full stop or an abbreviation as prose', () => {
    expect(main(features('the report is empty after row.total and report.append(row)'), Count.Identifier)).toBe(2);
    expect(main(features('It failed.Then it worked, e.g. on Monday, i.e. twice.'), Count.Identifier)).toBe(0);
  });

  it('reads LaTeX lines as mathematics, not as code-like lines', () => {
    expect(main(features('Let $G$ be a graph with\n    \\sum_{v \\in V} \\deg(v) = 2|E|\nand \\frac{a}{b}\nprove it.'), Count.CodeLine)).toBe(0);
    expect(main(features('int main() {\n    printf("%d\\n", x);\n}'), Count.CodeLine)).toBe(3);
  });

  it('reads non-Latin text, emoji and Greek without errors, Greek as math', () => {
    const buf = features('日本語の文章です 🙂 and the angle θ equals π/4');
    expect(main(buf, Count.MathSymbol)).toBe(2);
    expect(buf.count).toBeGreaterThan(0);
  });

  it('reads Chinese and Japanese character by character, so a word is found inside any sentence', () => {
    const WORDS = 0;
    const wordFeatures = (text: string): Set<number> => {
      const buf = features(text);
      const out = new Set<number>();
      for (let i = 0; i < buf.count; i++) if (buf.group[i] === WORDS) out.add(buf.index[i] as number);
      return out;
    };
    // Six ideographs: six one-character words and five pairs (a clause read as one token would give one).
    const six = features('我想学习编程');
    expect(six.group.subarray(0, six.count).filter((g) => g === WORDS).length).toBe(11);
    // "编程" (programming) in two unrelated sentences: the same features, wherever it stands.
    const shared = [...wordFeatures('我想学习编程')].filter((f) => wordFeatures('编程很有趣，对吧？').has(f));
    expect(shared.length).toBeGreaterThanOrEqual(3); // 编, 程, 编程
    // Full-width punctuation separates words, like its ASCII counterparts.
    expect(wordFeatures('你好，世界')).toEqual(wordFeatures('你好, 世界'));
    // Full-width Latin letters are their ASCII forms; 々 is part of a word, ・ separates words.
    expect(wordFeatures('Ｐｙｔｈｏｎ')).toEqual(wordFeatures('python'));
    expect(wordFeatures('人々')).toEqual(wordFeatures('人 々'));
    expect(wordFeatures('人々').size).toBe(3);
    expect(wordFeatures('ジョン・スミス')).toEqual(wordFeatures('ジョン スミス'));
    // A character between dashes is a word, not an operand of arithmetic.
    expect(main(features('东-西-南-北'), Count.Arithmetic)).toBe(0);
    // The explanation splits words as the scanner does: each word it names is a feature the scanner found.
    expect(wordsOf('我想学习Python编程，Ｐｙｔｈｏｎ')).toEqual(['我', '想', '学', '习', 'Python', '编', '程', 'Ｐｙｔｈｏｎ']);
    const found = wordFeatures('我想学习Python编程，Ｐｙｔｈｏｎ');
    for (const w of wordsOf('我想学习Python编程，Ｐｙｔｈｏｎ')) expect(found.has(unigramIndex(tokenHashOf(w.toLowerCase())))).toBe(true);
    // Latin words next to kana are still whole words.
    expect(wordFeatures('Pythonでリストをソートする').has([...wordFeatures('Python')][0] as number)).toBe(true);
  });

  it('reads at most the head and tail of a long turn: the middle cannot change the features', () => {
    const head = 'Summarize the following report in three bullet points. '.repeat(60);
    const tail = ' That is the end of the report; keep it short.'.repeat(30);
    const a = features(head + 'x'.repeat(50_000) + ' plain filler text '.repeat(2000) + tail);
    const b = features(head + '```js\nfunction f() { return 1; }\n```'.repeat(3000) + tail);
    expect(main(a, Count.Chars)).toBe(MAIN_HEAD_CHARS + MAIN_TAIL_CHARS);
    expect([...a.index.subarray(0, a.count)]).toEqual([...b.index.subarray(0, b.count)]);
    expect([...a.counts]).toEqual([...b.counts]);
  });

  it('weighs the context below the last user turn and reads tools and attachments', () => {
    const proof = 'Prove that the square root of two is irrational.';
    const asTask = features(proof);
    const asContext = features({
      messages: [
        { role: 'system', content: proof },
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'Hi!' },
        { role: 'user', content: [{ type: 'text', text: 'thanks' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
      ],
      tools: [{ type: 'function', function: { name: 'run_tests', description: 'Run the test suite' } }],
    });
    expect(lexiconCount(asContext, Region.Main, Lex.Proof)).toBe(0);
    expect(lexiconCount(asContext, Region.Context, Lex.Proof)).toBe(2); // prove, irrational
    expect(lexiconCount(asTask, Region.Main, Lex.Proof)).toBe(2);
    expect(asContext.dense[Dense.Lexicon + Lex.Proof]).toBeCloseTo(Math.log1p(2 * CONTEXT_WEIGHT));
    expect(asContext.dense[Dense.Lexicon + Lex.Proof]).toBeLessThan(asTask.dense[Dense.Lexicon + Lex.Proof] as number);
    expect(asContext.dense[Dense.System]).toBe(1);
    expect(asContext.dense[Dense.Turns]).toBeCloseTo(Math.log1p(2));
    expect(asContext.dense[Dense.Tools]).toBeCloseTo(Math.log1p(1));
    expect(asContext.dense[Dense.Attachments]).toBeCloseTo(Math.log1p(1));
    expect(context(asContext, Count.Chars)).toBeGreaterThan(proof.length); // system + history + tool text
  });

  it('leaves no state behind: a prompt scores the same whatever was read before', () => {
    const first = features('```\nconst a = 1;\n```');
    const again = new FeatureBuffer();
    extractFeatures({ messages: [{ role: 'user', content: 'def f(x): return x ** 2' }] }, again);
    extractFeatures({ messages: [{ role: 'user', content: '```\nconst a = 1;\n```' }] }, again);
    expect([...again.index.subarray(0, again.count)]).toEqual([...first.index.subarray(0, first.count)]);
    expect([...again.dense]).toEqual([...first.dense]);
  });

  it('scores the same in serving mode (weights summed while scanning) as in training mode', () => {
    const model = routerModel();
    const prompts = [
      'hello there',
      'Write a Python function that merges two sorted lists.\n\n```python\ndef merge(a, b):\n    pass\n```',
      'A train leaves at 3pm at 60 km/h; a second one leaves an hour later at 80 km/h. When does it catch up?',
      'Summarize: ' + 'the quick brown fox jumps over the lazy dog. '.repeat(200),
    ];
    for (const content of prompts) {
      const request: RoutableRequest = { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content }] };
      const recorded = new FeatureBuffer();
      extractFeatures(request, recorded);
      const served = new FeatureBuffer();
      served.weights = model.hashed;
      extractFeatures(request, served);
      const a = new Float64Array(CLASS_COUNT);
      const b = new Float64Array(CLASS_COUNT);
      scoreFeatures(model, recorded, a, new Float64Array(GROUP_COUNT * CLASS_COUNT));
      scoreFeatures(model, served, b, new Float64Array(GROUP_COUNT * CLASS_COUNT));
      for (let k = 0; k < CLASS_COUNT; k++) expect(b[k]).toBeCloseTo(a[k] as number, 9);
    }
  });
});
