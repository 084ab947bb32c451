/**
 * The feature space shared by the scanner, the model and the training script: hashed n-gram buckets
 * followed by named dense features. Changing anything here changes the meaning of the committed weights,
 * which the training test detects (retrain with `npm run train:router`).
 */
import { LEX_COUNT } from './lexicon.js';

/** Hashed word, stem and shape n-grams share one table of 2^HASH_BITS buckets. */
export const HASH_BITS = 12;
export const HASH_SIZE = 1 << HASH_BITS;
export const HASH_MASK = HASH_SIZE - 1;

/** Hashed feature groups (for normalisation and for explaining a decision). */
export const HashGroup = { Words: 0, Stems: 1, Shapes: 2 } as const;
export const HASH_GROUP_COUNT = 3;

/**
 * Dense features, each a small non-negative number (mostly log1p of a count). There is deliberately no
 * length or line-count feature: in the training data they mostly tell the sources apart (a long pasted
 * text is as likely a summary request as a puzzle), and cross-validation across sources improved without.
 */
export const Dense = {
  Fence: 0,
  InlineCode: 1,
  Indent: 2,
  CodePunct: 3,
  Identifier: 4,
  Call: 5,
  DigitShare: 6,
  Numbers: 7,
  Arithmetic: 8,
  MathSymbol: 9,
  Latex: 10,
  Money: 11,
  Percent: 12,
  Questions: 13,
  Turns: 14,
  System: 15,
  Tools: 16,
  Attachments: 17,
  CodeLines: 18,
  Blocks: 19,
  /** LEX_COUNT word-list counts follow, in `Lex` order. */
  Lexicon: 20,
} as const;
export const DENSE_COUNT = Dense.Lexicon + LEX_COUNT;

export const CLASS_COUNT = 3;

/**
 * Evidence groups a decision is explained by: the three hashed groups, then one per dense feature.
 * Labels are what `svc.routing.reason` and `svc-gateway route` print.
 */
export const GROUP_COUNT = HASH_GROUP_COUNT + DENSE_COUNT;
export const GROUP_LABELS: readonly string[] = [
  'wording',
  'word stems',
  'text shape',
  'code fences',
  'inline code',
  'indentation',
  'code punctuation',
  'identifiers',
  'function calls',
  'digits',
  'numbers',
  'arithmetic',
  'math symbols',
  'LaTeX',
  'money amounts',
  'percentages',
  'questions',
  'conversation turns',
  'system prompt',
  'tool definitions',
  'attachments',
  'code-like lines',
  'indented blocks',
  'code words',
  'language names',
  'coding verbs',
  'code keywords',
  'math words',
  'number words',
  'units',
  'proof/logic words',
  'reasoning words',
  'planning words',
  'simple-task words',
  'chit-chat words',
  'question words',
  'logic words',
  'tech words',
];
