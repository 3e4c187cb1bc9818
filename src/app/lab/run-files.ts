/**
 * What the lab writes out of a run and reads into one: the .nsrun file, the adapter in the PEFT
 * layout, training samples as TRL-style JSONL, and the words said about an import. Everything
 * but `download` is pure, so the files are tested in Node.
 */
import type { RunRecord } from '../../rl/records';
import { PEFT_CONFIG, PEFT_WEIGHTS } from '../../gpu/peft';
import { toJsonl, trainingSamples, type StorableConfig, type StoredAdapter } from '../../storage/index';
import { parseAnyRunConfig, promptTools } from '../../runtime/run-config';

export interface OutFile {
  blob: Blob;
  name: string;
}

/** A file name from a run's label: word characters, dots and dashes, at most 80. */
export function fileStem(label: string): string {
  return (
    label
      .replace(/[^\w.-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'run'
  );
}

export function runFileName(label: string): string {
  return `${fileStem(label)}.nsrun`;
}

/** adapter_model.safetensors and adapter_config.json, as PEFT's from_pretrained reads them. */
export function adapterFiles(adapter: Pick<StoredAdapter, 'files'>): OutFile[] {
  const weights = adapter.files[PEFT_WEIGHTS];
  return [
    { blob: new Blob([weights.slice().buffer as ArrayBuffer], { type: 'application/octet-stream' }), name: PEFT_WEIGHTS },
    { blob: new Blob([adapter.files[PEFT_CONFIG]], { type: 'application/json' }), name: PEFT_CONFIG },
  ];
}

/**
 * The run's training samples as JSONL rows, prompts rendered with the tools its track lists.
 * `config` is absent for a run that is gone; its prompts then list no tools.
 */
export function samplesFile(records: Iterable<RunRecord>, config: StorableConfig | undefined, label: string): OutFile & { rows: number } {
  const { rows } = trainingSamples(records, { tools: config ? promptTools(parseAnyRunConfig(config)) : undefined });
  return { blob: new Blob([toJsonl(rows)], { type: 'application/jsonl' }), name: `${fileStem(label)}-samples.jsonl`, rows: rows.length };
}

/**
 * What matching hashes show, and no more: the file was not damaged by accident. Whoever edits a
 * file can hash it again, and nothing signs it.
 */
export const HASHES_MATCH = 'Hashes match: no accidental damage. They are not a signature: whoever edits a run file can hash it again.';

/** What the lab says after importing a file, by whether it carried integrity hashes. */
export function importedMessage(name: string, integrity: string | undefined): string {
  return integrity === 'unverified'
    ? `Imported ${name} as a read-only run, unverified: the file carries no integrity hashes (an older app wrote it), so damage to it could not be detected.`
    : `Imported ${name} as a read-only run; hashes match: no accidental damage.`;
}

/** Saves a blob through a temporary link (the browser's download). */
export function download({ blob, name }: OutFile): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
