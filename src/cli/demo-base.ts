/**
 * The model `make-demo-model` fine-tunes from, as its output names it: the folder for the rebuild
 * command, a short name for the card, and the licence the derivative inherits.
 */
import { existsSync, rmSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { readModelFile } from '../models/source-node';

export interface DemoBase {
  /** The --base folder as given, so that the recorded command rebuilds from it. */
  path: string;
  /** The folder's own name, which the card and the hint table call the base. */
  name: string;
  /** The licence file written beside the derivative, or null where the base has none. */
  licence: string | null;
  /**
   * The layers after which a silent copy was inserted before fine-tuning (`--deepen`,
   * src/models/deepen.ts); absent when the base was fine-tuned as it is.
   */
  deepen?: number[];
}

/**
 * The default base. A report written before the base was recorded was built on it, with
 * llama2.c's MIT text as its LICENSE.
 */
export const STORIES260K: DemoBase = { path: 'data/models/stories260K', name: 'stories260K', licence: 'LICENSE' };

/** The names a model folder's licence goes by, in the order they are looked for. */
const LICENCE_FILES = ['LICENSE', 'LICENSE.md'];

/** The base a demo report was built on; one without the field predates it and means stories260K. */
export function reportBase(r: { base?: DemoBase }): DemoBase {
  return r.base ?? STORIES260K;
}

/**
 * The base at `path` (deepened after the layers in `deepen`, if given), and the licence file (name
 * and contents) its derivative is released under.
 */
export function demoBase(path: string, deepen?: number[]): { base: DemoBase; licence: [string, Uint8Array | string] | null } {
  const name = basename(resolve(path));
  const licence = baseLicence(path, name);
  return { base: { path, name, licence: licence?.[0] ?? null, ...(deepen ? { deepen } : {}) }, licence };
}

/**
 * stories260K's folder holds a note that names the MIT licence without its text, so its
 * derivative gets llama2.c's text; any other base passes on its own licence file, if it has one.
 */
function baseLicence(dir: string, name: string): [string, Uint8Array | string] | null {
  if (name === STORIES260K.name) return ['LICENSE', MIT_LICENSE];
  const file = LICENCE_FILES.find((f) => existsSync(join(dir, f)));
  return file ? [file, readModelFile(dir, file)] : null;
}

/**
 * Removes the licence files of an earlier build into `dir` that this one did not write: a stale
 * MIT LICENSE beside an Apache-licensed derivative would misstate its licence.
 */
export function dropOtherLicences(dir: string, kept: string | null): void {
  for (const file of LICENCE_FILES) if (file !== kept) rmSync(join(dir, file), { force: true });
}

/** llama2.c's licence, which covers stories260K and so its derivative. */
const MIT_LICENSE = `MIT License

Copyright (c) 2023 Andrej (karpathy/llama2.c, the stories260K weights)

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`;
