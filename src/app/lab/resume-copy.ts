/**
 * Resuming an imported run: the import stays as its file had it, and a copy of it (records,
 * last adapter) trains on from that adapter with the config and seeds it recorded, for more
 * steps. What the file must hold for that, and what the copy is called and asks for.
 */
import { isRemotePolicy, parseAnyRunConfig, type AnyRunConfig } from '../../runtime/run-config';
import type { StoredConfig } from '../../storage/index';
import { errorText } from '../gpu-adapter';

/** What a file's run has done, as far as resuming it goes. */
export interface ImportedProgress {
  /** Training steps logged (skipped ones included). */
  steps: number;
  /** Whether a step changed the policy: then only an adapter brings it back. */
  trained: boolean;
  /** Whether the file held an adapter. */
  hasAdapter: boolean;
}

/** Why an imported run cannot go on in this lab, in one line; null when it can. */
export function copyResumeProblem(rawConfig: unknown, progress: ImportedProgress): string | null {
  let config: AnyRunConfig;
  try {
    config = parseAnyRunConfig(rawConfig);
  } catch (e) {
    return `Its config is not one this lab runs (${errorText(e)}), so it cannot be resumed.`;
  }
  if (isRemotePolicy(config.models.policy)) return 'Its policy trained on a server, which holds what it learned, so it cannot be resumed here.';
  if (config.preset.finetune.mode === 'full')
    return 'It is a full fine-tuning run: its file holds no adapter to go on from (the trained model is a folder beside it), so it cannot be resumed.';
  if (progress.trained && !progress.hasAdapter) return 'Its file holds no adapter: export the run again with its adapter to resume it.';
  return null;
}

/** The steps a resumed copy asks for unless told: the rest of the plan, or as many again once the plan is done. */
export function defaultCopySteps(planned: number, done: number): number {
  return done < planned ? planned : done + planned;
}

/** The copy's label: where it came from, so the two are told apart on Runs. */
export function copyLabel(label: string, fileName: string | null): string {
  return fileName ? `${label}, resumed from ${fileName}` : `${label}, resumed`;
}

/** The copy's config: the recorded one as stored (seeds, model refs and all), planned to `steps`. */
export function copyConfig(stored: StoredConfig, steps: number): StoredConfig {
  const schedule = typeof stored.schedule === 'object' && stored.schedule !== null ? stored.schedule : {};
  return { ...stored, schedule: { ...schedule, steps } };
}

/** The setting that keeps the name of the file a run was imported from, for its copies' labels. */
export const importedNameSetting = (runId: string) => `imported-name:${runId}`;
