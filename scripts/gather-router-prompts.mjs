#!/usr/bin/env node
// Gathers the real-user prompts that svc-auto learns from (docs/routing.md, "Real-user prompts") from local
// copies of their public repositories, at the commits pinned below, into a local cache that is never
// committed (the texts stay where they were published; the repository keeps our labels and the features).
//
//   node scripts/gather-router-prompts.mjs --mirrors DIR [--out .cache/router/real-prompts.jsonl]
//
// DIR holds one git repository (bare or not) per source repository, named `owner+name` (optionally with the
// git directory in `owner+name/repo`) or `owner/name`; each must contain the pinned commit. Then
// `npm run data:router` checks every labelled prompt against its sha256 and builds the features.
//
// Rules (eval/routing/REAL-SOURCES.md):
//  * prompt = the user's first message, verbatim; keep 8 <= code points <= 6000 (of the trimmed text);
//  * drop obvious toxic / sexual / red-team / jailbreak prompts (a keyword screen), and prompts that only
//    make sense with a missing attachment (image, file, "here is the code:" with no code);
//  * de-duplicate on NFKC, lower-case, whitespace collapsed: within a source, across sources (the earlier
//    source wins) and against eval/routing/dev.jsonl;
//  * sample deterministically: candidates ordered by sha256("sample|<source>|<normalized prompt>"), the
//    first `cap` kept.
// The AlpacaEval sources are gathered only because the de-duplication above ran with them in place: they
// are never labelled or used (the AlpacaEval compilation's licence is non-commercial).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values: opt } = parseArgs({ options: { mirrors: { type: 'string' }, out: { type: 'string' }, sample: { type: 'boolean', default: false } } });
if (opt.mirrors === undefined) {
  console.error('usage: node scripts/gather-router-prompts.mjs --mirrors DIR [--out FILE] [--sample]');
  process.exit(2);
}
const MIRRORS = opt.mirrors;
const OUT = opt.out ?? join(ROOT, '.cache', 'router', 'real-prompts.jsonl');
const DEV = join(ROOT, 'eval', 'routing', 'dev.jsonl');
const LABELS = join(ROOT, 'eval', 'routing', 'real-labels.jsonl');
// By default exactly the labelled prompts are taken, by id: a copy holding more files than the one the
// sample was drawn from (the sampled snapshots lacked files of 4 MiB and more) would otherwise draw another
// sample. --sample draws a new one by the rules above, for a new round of labelling.
const LABELLED = opt.sample ? null : new Set(readFileSync(LABELS, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).id));

// ---------------------------------------------------------------- helpers
function gitDir(repo) {
  const flat = join(MIRRORS, repo.replace('/', '+'));
  for (const dir of [join(flat, 'repo'), flat, join(MIRRORS, repo)]) {
    if (existsSync(join(dir, 'HEAD')) || existsSync(join(dir, '.git'))) return existsSync(join(dir, '.git')) ? join(dir, '.git') : dir;
  }
  throw new Error(`no copy of ${repo} under ${MIRRORS} (owner+name, owner+name/repo or owner/name)`);
}
function show(repo, commit, path) {
  return execFileSync('git', ['--git-dir', gitDir(repo), 'show', `${commit}:${path}`], {
    encoding: 'utf8', maxBuffer: 256 * 1024 * 1024,
  });
}
function lsTree(repo, commit, dir) {
  const out = execFileSync('git', ['--git-dir', gitDir(repo), 'ls-tree', '-r', '--name-only', commit, dir], {
    encoding: 'utf8', maxBuffer: 64 * 1024 * 1024,
  });
  return out.split('\n').filter(Boolean);
}
// blob present in the snapshot? (snapshots lack files >= 4 MiB and LFS content)
function hasBlob(repo, commit, path) {
  try {
    execFileSync('git', ['--git-dir', gitDir(repo), 'cat-file', '-e', `${commit}:${path}`], { stdio: 'ignore' });
    return true;
  } catch { return false; }
}
const norm = (s) => s.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
const sha256 = (s) => createHash('sha256').update(s).digest('hex');
const cpLen = (s) => [...s].length;

// Minimal RFC-4180 CSV parser (quoted fields, "" escapes, embedded newlines).
function parseCSV(text) {
  const rows = []; let row = []; let f = ''; let q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) {
      if (c === '"') { if (text[i + 1] === '"') { f += '"'; i++; } else q = false; }
      else f += c;
    } else if (c === '"') q = true;
    else if (c === ',') { row.push(f); f = ''; }
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(f); rows.push(row); row = []; f = '';
    } else f += c;
  }
  if (f !== '' || row.length) { row.push(f); rows.push(row); }
  const [hdr, ...body] = rows;
  return body.filter((r) => r.length > 1 || r[0] !== '').map((r) => Object.fromEntries(hdr.map((h, j) => [h, r[j] ?? ''])));
}

// ---------------------------------------------------------------- filters
const TOXIC = new RegExp([
  String.raw`\bporn\w*`, String.raw`\bnsfw\b`, String.raw`\bnude\b`, String.raw`\bnudity\b`, String.raw`\bnaked\b`,
  String.raw`\bsex\b`, String.raw`\bsexual\w*`, String.raw`\bsexy\b`, String.raw`\berotic\w*`, String.raw`\bfetish\w*`,
  String.raw`\bhentai\b`, String.raw`\bincest\b`, String.raw`\bpedophil\w*`, String.raw`\bpaedophil\w*`, String.raw`\brape\w*`,
  String.raw`\borgasm\w*`, String.raw`\bboobs?\b`, String.raw`\bbreasts?\b`, String.raw`\bgenital\w*`, String.raw`\bmasturbat\w*`,
  String.raw`\bbdsm\b`, String.raw`\bdominatrix\b`, String.raw`\bfeet\b.*\b(worship|lick)`, String.raw`\bspank\w*`,
  String.raw`\bfuck\w*`, String.raw`\bcunt\b`, String.raw`\bbitch\w*`, String.raw`\bwhore\b`, String.raw`\bslut\w*`,
  String.raw`\bnigg\w*`, String.raw`\bfaggot\w*`, String.raw`\bretard\w*`,
  String.raw`\bbomb\b`, String.raw`\bexplosives?\b`, String.raw`\bmethamphetamine\b`, String.raw`\bcook meth\b`,
  String.raw`\bsuicid\w*`, String.raw`\bkill (myself|yourself|him|her|them|people|someone|my)\b`, String.raw`\bmurder\w*`,
  String.raw`\bterroris\w*`, String.raw`\bjailbreak\w*`, String.raw`do anything now`,
  String.raw`\bdeveloper mode\b`, String.raw`\buncensored\b`, String.raw`\bunfiltered\b`, String.raw`\bno (ethical|moral) (guidelines|restrictions)\b`,
  String.raw`\bhack (into|someone)\b`, String.raw`\bsteal\b`, String.raw`\bshoplift\w*`, String.raw`\bpoison\w*`,
  // zh / ru / es / fr obvious terms
  '色情', '做爱', '性爱', '裸体', '自杀', 'порно', 'секс', 'самоубий', 'pornograf', 'sexo', 'desnud', 'suicid',
].join('|'), 'i');

const ATTACH = new RegExp([
  String.raw`\battach(ed|ment)\b`, String.raw`\bscreenshot\b`, String.raw`\b(this|the|my|that) (image|picture|photo|pic|screenshot|pdf|video)\b`,
  String.raw`\b(uploaded|i upload(ed)?)\b`, String.raw`\bthe (above|following|attached) (file|image|document|pdf|link|article|text)\b`,
  String.raw`\bsee (the )?(image|picture|link) below\b`,
  String.raw`(here is|here's|below is|this is) (the|my) (code|script|file|program)[\s:.\-]*$`,
  String.raw`(code|script|file|program|text|article)\s*:\s*$`,
  String.raw`\bhttps?://\S+\s*$`, // bare link to content the model cannot read (prompt ends with the URL)
].join('|'), 'i');

function keep(p) {
  const t = p.trim();
  if (/\bDAN\b/.test(t)) return 'toxic'; // case-sensitive: the "DAN" jailbreak persona
  const n = cpLen(t);
  if (n < 8 || n > 6000) return 'length';
  if (TOXIC.test(t)) return 'toxic';
  if (ATTACH.test(t)) return 'attachment';
  if (/^\s*(\[?image\]?|<image>|!\[)/i.test(t)) return 'attachment';
  return null;
}

// ---------------------------------------------------------------- language guess (for mixed sources)
const STOP = {
  en: ['the', 'and', 'is', 'to', 'of', 'in', 'what', 'how', 'you', 'for', 'with', 'can', 'this', 'that', 'write', 'my', 'it', 'me', 'a', 'i'],
  es: ['el', 'la', 'de', 'que', 'y', 'en', 'los', 'las', 'por', 'para', 'una', 'un', 'cómo', 'como', 'es', 'con', 'del', 'qué'],
  fr: ['le', 'la', 'les', 'de', 'des', 'et', 'est', 'un', 'une', 'pour', 'que', 'qui', 'dans', 'je', 'vous', 'moi', 'quel', 'sur'],
  de: ['der', 'die', 'das', 'und', 'ist', 'ich', 'nicht', 'ein', 'eine', 'zu', 'mit', 'für', 'wie', 'was', 'sie', 'mir'],
  pt: ['o', 'a', 'de', 'que', 'e', 'do', 'da', 'em', 'um', 'uma', 'para', 'com', 'não', 'os', 'como', 'você'],
  it: ['il', 'di', 'che', 'e', 'la', 'per', 'un', 'una', 'non', 'sono', 'come', 'del', 'della', 'mi'],
  id: ['yang', 'dan', 'di', 'ini', 'itu', 'dengan', 'untuk', 'tidak', 'apa', 'saya', 'ke', 'dari', 'bagaimana'],
  tr: ['bir', 've', 'bu', 'için', 'ne', 'ile', 'nasıl', 'mi', 'çok', 'daha', 'gibi'],
  vi: ['và', 'của', 'là', 'có', 'không', 'cho', 'những', 'một', 'được', 'trong', 'tôi', 'bạn'],
};
function guessLang(text) {
  const t = text.slice(0, 2000);
  const count = (re) => (t.match(re) || []).length;
  const kana = count(/[\u3040-\u30ff]/g), han = count(/[\u4e00-\u9fff]/g), hangul = count(/[\uac00-\ud7af]/g);
  const cyr = count(/[\u0400-\u04ff]/g), arab = count(/[\u0600-\u06ff]/g), latin = count(/[a-zA-Z]/g);
  const thai = count(/[\u0e00-\u0e7f]/g), hebrew = count(/[\u0590-\u05ff]/g), greek = count(/[\u0370-\u03ff]/g);
  const deva = count(/[\u0900-\u097f]/g);
  const nonLatin = { ja: kana, ko: hangul, ru: cyr, ar: arab, th: thai, he: hebrew, el: greek, hi: deva };
  if (kana > 0 && kana + han > latin * 0.3) return 'ja';
  if (han > latin * 0.3 && han > 3) return 'zh';
  let best = null, bestN = 0;
  for (const [k, v] of Object.entries(nonLatin)) if (v > bestN) { best = k; bestN = v; }
  if (best && bestN > latin * 0.3 && bestN > 3) {
    if (best === 'ru' && /[іїєґ]/i.test(t)) return 'uk';
    if (best === 'ar' && /[پچژگ]/.test(t)) return 'fa';
    return best;
  }
  const words = t.toLowerCase().match(/[\p{L}']+/gu) || [];
  let bl = 'en', bs = 0;
  for (const [lang, sw] of Object.entries(STOP)) {
    const set = new Set(sw);
    const s = words.reduce((a, w) => a + (set.has(w) ? 1 : 0), 0);
    if (s > bs) { bs = s; bl = lang; }
  }
  return bl;
}
const LANGNAME = { English: 'en', Chinese: 'zh', Russian: 'ru', French: 'fr', Spanish: 'es', German: 'de', Portuguese: 'pt', Italian: 'it', Japanese: 'ja', Korean: 'ko', Arabic: 'ar', Turkish: 'tr', Indonesian: 'id', Vietnamese: 'vi', Persian: 'fa', Polish: 'pl', Dutch: 'nl', Ukrainian: 'uk' };

// ---------------------------------------------------------------- sources
// Each loader returns [{key, prompt, path, lang?}], key = stable index/id inside the source.
const SOURCES = [
  {
    source: 'oasst-prompt-lottery', commit: 'ce935dee6922ec75d5a4006dd1c3595b39a01fdf', family: 'chat-assistant-users', repo: 'Open-Assistant/oasst-model-eval', licence: 'Apache-2.0', lang: 'en', cap: 400,
    load(c) {
      const out = [];
      for (const path of ['model_eval/manual/data/prompt_lottery_en_250_text.jsonl', 'model_eval/manual/data/en_100_text.jsonl']) {
        show(this.repo, c, path).split('\n').filter(Boolean).forEach((l, i) => out.push({ key: `${path.split('/').pop().replace('.jsonl', '')}:${i}`, prompt: JSON.parse(l), path }));
      }
      for (const path of lsTree(this.repo, c, 'sampling_reports/oasst-sft/1k-prompts/')) {
        if (!path.endsWith('.json') || !hasBlob(this.repo, c, path)) continue;
        const d = JSON.parse(show(this.repo, c, path));
        const tag = path.split('/').pop().replace(/^result_(\d+)_.*$/, 'lottery1k_$1');
        d.prompts.forEach((p, i) => out.push({ key: `${tag}:${i}`, prompt: p.prompt, path }));
      }
      return out;
    },
  },
  {
    source: 'koala-test', commit: '2d4396aee3cff495382e9b0ad2521d70b177763b', family: 'chat-assistant-users', repo: 'arnav-gudibande/koala-test-set', licence: 'Apache-2.0 (repo LICENSE); README: "please do not use this test set for training purposes"', lang: 'en', cap: 400,
    load(c) {
      const path = 'koala_test_set.jsonl';
      return show(this.repo, c, path).split('\n').filter(Boolean).map((l) => { const d = JSON.parse(l); return { key: d.id, prompt: d.prompt, path }; });
    },
  },
  {
    source: 'wildchat-convotopo', commit: 'c24138a2d402839fc0537c5a8baac8bdd250814b', family: 'chat-assistant-users', repo: 'issacting93/Convo-topo', licence: 'ODC-BY-1.0 (WildChat-1M); carrier repo has no licence file', cap: 400,
    load(c) {
      const out = [];
      for (const path of lsTree(this.repo, c, 'public/output-wildchat/')) {
        if (!path.endsWith('.json')) continue;
        let txt = show(this.repo, c, path);
        let d;
        try { d = JSON.parse(txt); } catch {
          // most files are cut inside "metadata" (an unquoted timestamp); the messages part is intact
          const cut = txt.indexOf(',\n  "metadata"');
          if (cut < 0) continue;
          try { d = JSON.parse(txt.slice(0, cut) + '\n}'); } catch { continue; }
        }
        const first = (d.messages || []).find((m) => m.role === 'user');
        if (!first || typeof first.content !== 'string') continue;
        const lang = LANGNAME[d.metadata?.language] || guessLang(first.content);
        out.push({ key: d.id.replace(/^wildchat_/, ''), prompt: first.content, path, lang });
      }
      return out;
    },
  },
  {
    source: 'codechat-wildchat', commit: '043013c47f14d0b5987a0680536b077b9a1ee09c', family: 'coding-assistant-users', repo: 'Software-Evolution-Analytics-Lab-SEAL/CodeChat', licence: 'MIT (repo LICENSE); derived from WildChat (ODC-BY-1.0)', cap: 400,
    load(c) {
      const out = [];
      for (const path of ['RQ1/rq1_results/RQ1_labelled.csv', 'RQ2/rq2_results/1_topic7_gap_labeled.csv']) {
        for (const r of parseCSV(show(this.repo, c, path))) {
          if (r.turn1_number !== '1' || !r.prompt1) continue; // only a conversation's first user turn
          out.push({ key: r.conversation_id, prompt: r.prompt1, path, lang: guessLang(r.prompt1) });
        }
      }
      return out;
    },
  },
  {
    dedupeOnly: true, source: 'alpacaeval-helpful-base', commit: 'a83532466ee2bc89436ea7b9a97250d405af45f5', family: 'chat-assistant-crowdworkers', repo: 'go-akshit/spring2024-assignment5-alignment', licence: 'MIT (Anthropic hh-rlhf, origin); AlpacaEval set (tatsu-lab, data CC-BY-NC-4.0 on HF); carrier repo has no licence file', lang: 'en', cap: 400,
    load(c) {
      const path = 'alpaca_eval_predictions.json';
      return JSON.parse(show(this.repo, c, path)).map((d, i) => ({ i, d })).filter(({ d }) => d.dataset === 'helpful_base')
        .map(({ i, d }) => ({ key: `alpaca_eval:${i}`, prompt: d.instruction, path }));
    },
  },
  {
    dedupeOnly: true, source: 'alpacaeval-oasst', commit: 'a83532466ee2bc89436ea7b9a97250d405af45f5', family: 'chat-assistant-users', repo: 'go-akshit/spring2024-assignment5-alignment', licence: 'Apache-2.0 (OpenAssistant oasst1, origin); AlpacaEval set (tatsu-lab, data CC-BY-NC-4.0 on HF); carrier repo has no licence file', lang: 'en', cap: 400,
    load(c) {
      const path = 'alpaca_eval_predictions.json';
      return JSON.parse(show(this.repo, c, path)).map((d, i) => ({ i, d })).filter(({ d }) => d.dataset === 'oasst')
        .map(({ i, d }) => ({ key: `alpaca_eval:${i}`, prompt: d.instruction, path }));
    },
  },
  {
    source: 'stackmathqa', commit: '80c89c14d96a17af7f75383bc7a2add47cd928f9', family: 'qa-forum-math', repo: 'yifanzhang-pro/StackMathQA', licence: 'CC-BY-4.0 (repo LICENSE); Stack Exchange content CC-BY-SA', lang: 'en', cap: 400,
    load(c) {
      const out = [];
      for (const path of lsTree(this.repo, c, 'data/stackmathqa100k/')) {
        if (!path.endsWith('.jsonl') || !hasBlob(this.repo, c, path)) continue;
        show(this.repo, c, path).split('\n').filter(Boolean).forEach((l, i) => {
          const d = JSON.parse(l);
          const m = /questions\/(\d+)/.exec(d.meta?.url || '');
          const site = (d.meta?.url || '').replace(/^https?:\/\/([^/]+).*$/, '$1');
          out.push({ key: m ? `${site}:${m[1]}` : `${path}:${i}`, prompt: d.Q, path });
        });
      }
      return out;
    },
  },
  {
    source: 'conala-so', commit: 'b48112fe492432507d72004aafb6f0c399308333', family: 'qa-forum-code', repo: 'zorazrw/multilingual-conala', licence: 'CC-BY-SA-4.0 (README badge); Stack Overflow titles', lang: 'en', cap: 400,
    load(c) {
      const path = 'dataset/train/train.json';
      return JSON.parse(show(this.repo, c, path)).map((d, i) => ({ key: `so:${d.question_id}:${i}`, prompt: d.intent, path }));
    },
  },
  ...['es', 'ru', 'ja'].map((lg) => ({
    source: `mconala-${lg}`, commit: 'b48112fe492432507d72004aafb6f0c399308333', family: 'qa-forum-code-multilingual', repo: 'zorazrw/multilingual-conala', licence: 'CC-BY-SA-4.0 (README badge); Stack Overflow en español / на русском / スタック・オーバーフロー titles', lang: lg, cap: 400,
    load(c) {
      const path = `dataset/test/${lg}_test.json`;
      return JSON.parse(show(this.repo, c, path)).map((d, i) => ({ key: `so-${lg}:${d.question_id}:${i}`, prompt: d.intent, path }));
    },
  })),
  {
    source: 'nq-open', commit: 'fb26a3073b1fe636c97302890a27b491d6530130', family: 'search-queries', repo: 'google-research-datasets/natural-questions', licence: 'CC-BY-SA-3.0 (nq_open/README.md)', lang: 'en', cap: 300,
    load(c) {
      const path = 'nq_open/NQ-open.dev.jsonl';
      return show(this.repo, c, path).split('\n').filter(Boolean).map((l, i) => ({ key: `dev:${i}`, prompt: JSON.parse(l).question, path }));
    },
  },
  {
    // prompts.csv at HEAD is >= 4 MiB (absent from the snapshot): pinned to the newest commit whose blob is present.
    source: 'awesome-chatgpt-prompts', family: 'prompt-collection', repo: 'f/awesome-chatgpt-prompts', commit: '50a97c072933c93c76cc0714e9dd4c4cf1d80ae7', licence: 'CC0-1.0 (LICENSE)', lang: 'en', cap: 400,
    load(c) {
      const path = 'prompts.csv';
      // type TEXT only (STRUCTURED / IMAGE rows are JSON or image-model prompts); also drop TEXT rows that are
      // really text-to-image / video generation prompts (not chat-LLM traffic).
      const IMG = /\b(ultra[- ]?realistic|photo[- ]?realistic|hyper[- ]?realistic|aspect ratio|\d{1,2}:\d{1,2} (frame|ratio|format)|--ar\b|[48]k\b|dslr|\d+ ?mm lens|f\/\d|depth of field|bokeh|selfie|portrait of|photo of|image of|render(ed)? in|cinematic (shot|scene|still|lighting)|midjourney|stable diffusion|nano banana|text-to-image|video (prompt|generation)|create (a|an) (photo|image|picture|video|poster))/i;
      return parseCSV(show(this.repo, c, path)).map((r, i) => ({ r, i })).filter(({ r }) => r.type === 'TEXT' && !IMG.test(r.prompt) && !r.prompt.includes('${')) // ${var} = unfilled prompts.chat template variables
        .map(({ r, i }) => ({ key: `${i}:${r.act}`, prompt: r.prompt, path, lang: guessLang(r.prompt) }));
    },
  },
  {
    source: 'awesome-chatgpt-prompts-zh', commit: '367ed18b9c50b702d762c6fbc2885107141acb62', family: 'prompt-collection-multilingual', repo: 'PlexPt/awesome-chatgpt-prompts-zh', licence: 'MIT (LICENSE)', lang: 'zh', cap: 400,
    load(c) {
      const path = 'prompts-zh.json';
      return JSON.parse(show(this.repo, c, path)).map((d, i) => ({ key: `${i}:${d.act}`, prompt: d.prompt, path }));
    },
  },
];

// ---------------------------------------------------------------- main
const seen = new Set();
if (existsSync(DEV)) for (const l of readFileSync(DEV, 'utf8').split('\n').filter(Boolean)) seen.add(norm(JSON.parse(l).prompt));

const summary = [];
const gathered = [];
for (const S of SOURCES) {
  const commit = S.commit;
  const raw = S.load(commit);
  if (LABELLED !== null) {
    if (S.dedupeOnly) continue;
    const byId = new Map(raw.map((r) => [`${S.source}:${r.key}`, r]));
    const wanted = [...LABELLED].filter((id) => id.startsWith(`${S.source}:`));
    const missing = wanted.filter((id) => !byId.has(id));
    if (missing.length > 0) throw new Error(`${S.source}: ${missing.length} labelled prompts not found in ${S.repo}@${commit} (${missing.slice(0, 3).join(', ')})`);
    for (const id of wanted) {
      const r = byId.get(id);
      gathered.push({ id, source: S.source, family: S.family, lang: r.lang || S.lang || guessLang(r.prompt), prompt: r.prompt, repo: S.repo, commit, path: r.path, licence: S.licence });
    }
    summary.push({ source: S.source, family: S.family, raw: raw.length, candidates: raw.length, written: wanted.length, langs: {}, drop: {} });
    continue;
  }
  const drop = { length: 0, toxic: 0, attachment: 0, dup_in_source: 0, dup_other_source_or_dev: 0 };
  const cand = new Map();
  for (const r of raw) {
    if (typeof r.prompt !== 'string') continue;
    const why = keep(r.prompt);
    if (why) { drop[why]++; if (process.env.SHOW_DROPS) console.error(`[${S.source}] ${why}: ${JSON.stringify(r.prompt.slice(0, 160))}`); continue; }
    const n = norm(r.prompt);
    if (cand.has(n)) { drop.dup_in_source++; continue; }
    if (seen.has(n)) { drop.dup_other_source_or_dev++; continue; }
    cand.set(n, r);
  }
  const picked = [...cand.entries()]
    .map(([n, r]) => ({ n, r, h: sha256(`sample|${S.source}|${n}`) }))
    .sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : 0))
    .slice(0, S.cap);
  for (const p of picked) seen.add(p.n);
  const rows = picked.map(({ r }) => ({
    id: `${S.source}:${r.key}`, source: S.source, family: S.family, lang: r.lang || S.lang || guessLang(r.prompt),
    prompt: r.prompt, repo: S.repo, commit, path: r.path, licence: S.licence,
  }));
  const ids = new Set(rows.map((x) => x.id));
  if (ids.size !== rows.length) throw new Error(`duplicate ids in ${S.source}`);
  if (!S.dedupeOnly) gathered.push(...rows);
  const langs = {};
  for (const x of rows) langs[x.lang] = (langs[x.lang] || 0) + 1;
  summary.push({ source: S.source, family: S.family, raw: raw.length, candidates: cand.size, written: rows.length, langs, drop });
}

mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, gathered.map((x) => JSON.stringify(x)).join('\n') + '\n');
for (const s of summary) console.log(`${s.source.padEnd(28)} ${s.family.padEnd(30)} raw=${String(s.raw).padStart(5)} kept=${String(s.written).padStart(4)} dropped=${JSON.stringify(s.drop)}`);
console.log(`wrote ${gathered.length} prompts to ${OUT}; now npm run data:router`);
