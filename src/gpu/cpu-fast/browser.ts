/** The CPU backends in a browser worker: the fast one on all cores, or the reference by name. */
import { CpuBackend } from '../cpu/backend';
import { FastCpuBackend } from './backend';
import { browserThreads } from './threads-browser';

/**
 * The fast backend where the page is cross-origin isolated (the lab always is: its shared
 * memory needs it), else the reference, which needs nothing.
 */
export async function browserCpuBackend(name: 'cpu' | 'cpu-reference'): Promise<CpuBackend> {
  if (name === 'cpu-reference' || typeof SharedArrayBuffer === 'undefined') return new CpuBackend();
  return FastCpuBackend.create(browserThreads());
}
