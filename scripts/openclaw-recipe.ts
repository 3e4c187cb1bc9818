/**
 * docs/serve.md's OpenClaw recipe, the text between `<!-- openclaw:start -->` and
 * `<!-- openclaw:end -->`: openClawRecipe() (src/app/lab/openclaw-recipe.ts, whose commands
 * `npm run test:openclaw` runs) for README_DAY, with the figures of the day that test measured.
 *
 *   npm run test:openclaw -- --report docs/bench/openclaw.json
 *   node --import tsx scripts/openclaw-recipe.ts
 *
 * test/docs/openclaw-recipe.test.ts checks that the page holds what this makes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { replaceSection, ROOT } from './readme-section.mjs';
import { openClawRecipe, README_DAY, type DayReport } from '../src/app/lab/openclaw-recipe';

export const RECIPE_PAGE = 'docs/serve.md';
export const RECIPE_REPORT = 'docs/bench/openclaw.json';

/** The recipe from the committed day. */
export function recipeSection(): string {
  return openClawRecipe(README_DAY, JSON.parse(readFileSync(join(ROOT, RECIPE_REPORT), 'utf8')) as DayReport);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const path = join(ROOT, RECIPE_PAGE);
  writeFileSync(path, replaceSection(readFileSync(path, 'utf8'), 'openclaw', recipeSection()));
  console.log(`${RECIPE_PAGE}: section "openclaw" now holds the recipe with ${RECIPE_REPORT}'s day`);
}
