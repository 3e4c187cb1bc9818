/**
 * docs/serve.md's OpenClaw recipe is what openClawRecipe() makes, the function whose commands
 * `npm run test:openclaw` runs, so the page tells a person to do what the test did.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replaceSection, ROOT } from '../../scripts/readme-section.mjs';
import { RECIPE_PAGE, recipeSection } from '../../scripts/openclaw-recipe';
import { dayEntry, installCommands, README_DAY, serveArgs, shellLine } from '../../src/app/lab/openclaw-recipe';

const page = readFileSync(join(ROOT, RECIPE_PAGE), 'utf8');

describe("docs/serve.md's OpenClaw recipe", () => {
  it('is what scripts/openclaw-recipe.ts makes from the committed day', () => {
    expect(page).toContain('<!-- openclaw:start -->');
    expect(replaceSection(page, 'openclaw', recipeSection())).toBe(page);
  });

  it('holds the install, the server, the provider entry and the resume as the test runs them', () => {
    for (const c of installCommands(README_DAY.prefix)) expect(page).toContain(shellLine(c));
    const serve = shellLine({ argv: ['npx', 'nextstate', ...serveArgs(README_DAY)] });
    expect(page).toContain(`${serve}\n`);
    expect(page).toContain(`${serve} --resume\n`);
    expect(page).toContain('```json\n' + dayEntry(README_DAY) + '\n```');
  });

  it("quotes shell words so that a shell gives them back, the prefix's $HOME expanded", () => {
    expect(shellLine({ argv: ['openclaw', 'agent', '--message', 'No, say "moon" `now` for $5'], path: ['$HOME/a', '/b'] })).toBe(
      'PATH=$HOME/a:/b:$PATH openclaw agent --message "No, say \\"moon\\" \\`now\\` for \\$5"',
    );
  });
});
