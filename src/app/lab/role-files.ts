/**
 * A picked folder of ONNX files for a judge, simulated user or evaluator on transformers.js. File
 * objects lose their folder path when posted to a worker, so each goes with its path inside the
 * folder ("onnx/model_q4.onnx"); files picked one by one without a folder find their place by name.
 */
import type { PickedFile } from '../../generators/transformers';
import type { Role } from './setup-shape';

/** The folders picked for roles, by role (File objects are not remembered across reloads). */
export type RoleFiles = Partial<Record<Role, File[]>>;

export function pickedRoleFiles(files: readonly File[]): PickedFile[] {
  return files.map((file) => {
    const rel = file.webkitRelativePath;
    // "Qwen3-0.6B-ONNX/onnx/model_q4.onnx" -> "onnx/model_q4.onnx"
    const path = rel && rel.includes('/') ? rel.slice(rel.indexOf('/') + 1) : /\.onnx(_data(_\d+)?)?$/.test(file.name) ? `onnx/${file.name}` : file.name;
    return { path, file };
  });
}

/** What a picked role folder lacks to run on transformers.js, in words; null when it looks complete. */
export function roleFolderProblem(role: Role, files: readonly File[] | undefined): string | null {
  if (!files?.length) return `Pick the ${role}\u2019s ONNX model folder (config.json, tokenizer.json, tokenizer_config.json, onnx/model*.onnx).`;
  const paths = pickedRoleFiles(files).map((f) => f.path);
  const missing = ['config.json', 'tokenizer.json', 'tokenizer_config.json'].filter((f) => !paths.includes(f));
  if (!paths.some((p) => /^onnx\/model[\w]*\.onnx$/.test(p))) missing.push('onnx/model*.onnx');
  return missing.length ? `The ${role}\u2019s folder lacks ${missing.join(', ')}: pick a folder exported for transformers.js.` : null;
}
