/**
 * One copy per run file: the lab keys each imported file by the SHA-256 of its bytes, so importing
 * the same file again (dropped twice, or a shared link visited twice) opens the copy it made.
 */
import { Sha256 } from '../../gpu/sha256';

/** The setting that names the run a file with this digest was imported as. */
export const importedCopySetting = (digest: string) => `imported-file:${digest}`;

/** SHA-256 of a file's bytes as hex, read piece by piece (a run file can be hundreds of megabytes). */
export async function fileDigest(file: Blob): Promise<string> {
  const hash = new Sha256();
  const reader = file.stream().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    hash.update(value);
  }
  return hash.hex();
}
