/**
 * Where the policy worker reads the policy's files: a hub id or URL (kept in Cache Storage) at a
 * revision, or files the person picked. A run resumed from its record asks for the commit it
 * recorded; when that commit cannot be read, the error says so and what to do instead.
 */
import { ModelSourceError } from '../../gpu/errors';
import { COMMIT } from '../../models/hub';
import { FileListSource, HubSource, type HubSourceOptions, type ModelSource, type PickedModelFile } from '../../models/source';
import { shortCommit } from '../../runtime/policy-commit';

/** A hub id or URL at a revision (absent: main), or picked files. */
export type ModelLocation = { kind: 'hub'; id: string; revision?: string } | { kind: 'files'; files: PickedModelFile[] };

/** The hub's side of a source (its fetch, its endpoint); the page's defaults when absent. */
export type HubAccess = Pick<HubSourceOptions, 'fetchFn' | 'endpoint' | 'cacheStorage'>;

export function policySource(location: ModelLocation, hub: HubAccess = {}): ModelSource {
  return location.kind === 'hub' ? new HubSource(location.id, { ...hub, revision: location.revision }) : new FileListSource(location.files);
}

/** The location at the commit its files were read at, so a reload reads the same files after the branch moved. */
export function pinnedLocation(location: ModelLocation, commit: string | null): ModelLocation {
  return location.kind === 'hub' && commit ? { ...location, revision: commit } : location;
}

/** The commit a run recorded for its policy could not be read (gone from the hub, the network down, no access). */
export class RecordedCommitError extends ModelSourceError {
  constructor(id: string, commit: string, cause: string) {
    super(
      `${id} at commit ${shortCommit(commit)}, the one this run recorded, could not be loaded: ${cause} ` +
        'Resuming needs that commit; to train on the model as the hub has it now, start a new run from Setup.',
    );
  }
}

/** A failure to read a model pinned at a commit, said as the recorded commit's; any other error as it is. */
export function loadError(location: ModelLocation, e: unknown): unknown {
  if (location.kind !== 'hub' || !location.revision || !COMMIT.test(location.revision) || !(e instanceof ModelSourceError)) return e;
  return new RecordedCommitError(location.id, location.revision, e.message);
}
