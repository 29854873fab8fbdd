import { seededRandom } from '../src/lib/random.js';

/**
 * Deterministic, realistic-looking names for seeded data: pseudo-words built from syllables, so
 * that substring search meets the spread of trigrams real names have (not one shared prefix).
 */
const SYLLABLES = [
  'ka',
  'lo',
  'ven',
  'tri',
  'mor',
  'sa',
  'qui',
  'dex',
  'ra',
  'bel',
  'zon',
  'fi',
  'nu',
  'gra',
  'hol',
  'pex',
  'ty',
  'wen',
  'cor',
  'dal',
  'mi',
  'sto',
  'vra',
  'jun',
  'ex',
  'ol',
  'pra',
  'len',
  'ush',
  'ik',
];

function pseudoWord(random: () => number, syllables = 3): string {
  let word = '';
  for (let i = 0; i < syllables; i++) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
  return word[0]!.toUpperCase() + word.slice(1);
}

/** `count` distinct company-like names. */
export function companyNames(count: number, seed = 42): string[] {
  const random = seededRandom(seed);
  const names = new Set<string>();
  while (names.size < count)
    names.add(`${pseudoWord(random, 2 + Math.floor(random() * 2))}${random() < 0.3 ? ' Labs' : ''}`);
  return [...names];
}
