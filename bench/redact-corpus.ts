/**
 * Recall and false positives of the built-in redaction on test/fixtures/redaction (issue 10, item 4).
 * Used by test/log/redact-corpus.test.ts and by `npm run bench:redact` (bench/redact.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { redactText } from '../lib/log/redact/redact.js';

const DIR = join(import.meta.dirname, '..', 'test', 'fixtures', 'redaction');

/** One corpus file as [kind, text] rows (`\n` / `\t` unescaped). */
export function readCorpus(file: 'secrets.txt' | 'lookalikes.txt'): [string, string][] {
  return readFileSync(join(DIR, file), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const i = l.indexOf('\t');
      return [
        l.slice(0, i),
        l
          .slice(i + 1)
          .replace(/\\n/g, '\n')
          .replace(/\\t/g, '\t'),
      ];
    });
}

/** The corpus figures: counts, recall (0–1), and the rows missed / wrongly flagged as `kind: text`. */
export interface CorpusFigures {
  secrets: number;
  secretKinds: number;
  lookalikes: number;
  lookalikeKinds: number;
  recall: number;
  missed: string[];
  falsePositives: string[];
}

/** Runs `redactText` with the built-in patterns over both corpus files. */
export function measureCorpus(): CorpusFigures {
  const secrets = readCorpus('secrets.txt');
  const looks = readCorpus('lookalikes.txt');
  const missed = secrets.filter(([, t]) => redactText(t).text === t).map(([k, t]) => `${k}: ${t}`);
  const falsePositives = looks.filter(([, t]) => redactText(t).text !== t).map(([k, t]) => `${k}: ${t}`);
  return {
    secrets: secrets.length,
    secretKinds: new Set(secrets.map((r) => r[0])).size,
    lookalikes: looks.length,
    lookalikeKinds: new Set(looks.map((r) => r[0])).size,
    recall: (secrets.length - missed.length) / secrets.length,
    missed,
    falsePositives,
  };
}
