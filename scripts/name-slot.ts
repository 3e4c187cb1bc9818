/**
 * The teacher's probability of each child's pet name where a story names the pet (src/demo/name-slot.ts),
 * for the default child and the six wish combinations of docs/reproduction.md (OTHER_CHILDREN), on each model folder given:
 *
 *   npx nextstate make-demo-model --out plain-demo --seed 1
 *   npx nextstate make-demo-model --out copy-demo --seed 1 --examples 8000 --epochs 5 --copy-task
 *   npx nextstate make-demo-model --base copy-demo --out copy-demo-2 --seed 2 --examples 8000 --epochs 5 --copy-task
 *   node --import tsx scripts/name-slot.ts plain-demo copy-demo copy-demo-2 > docs/reproduction/name-slot.json
 *   npx nextstate make-demo-model --out deep-copy --deepen 1,2,3 --seed 1 --examples 8000 --epochs 5 --copy-task
 *   node --import tsx scripts/name-slot.ts copy-demo deep-copy > docs/reproduction/name-slot-deep.json
 *
 * copy-demo is the shipped demo model (public/models/storyteller-demo); plain-demo the same recipe without the copy task.
 */
import { CpuBackend } from '../src/gpu/cpu/backend';
import { Policy } from '../src/gpu/policy';
import { DirSource } from '../src/models/source-node';
import { nameSlot } from '../src/demo/name-slot';
import { OTHER_CHILDREN } from '../src/sims/scenarios/other-child';

const round = (x: number) => Number(x.toFixed(3));
const models = [];
for (const dir of process.argv.slice(2)) {
  const policy = await Policy.load(new DirSource(dir), new CpuBackend());
  const children = [];
  for (const child of OTHER_CHILDREN) {
    const m = await nameSlot(policy, child);
    children.push({ ...child, hinted: round(m.hinted), unhinted: round(m.unhinted), hintedFirstToken: round(m.hintedFirstToken), cases: m.cases });
  }
  models.push({ model: dir, children });
}
console.log(
  JSON.stringify({ measure: 'p(name | hint in front, opening, "The <pet> was called" and two other name sentences), mean over openings', models }, null, 2),
);
