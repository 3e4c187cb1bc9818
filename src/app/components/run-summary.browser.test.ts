/**
 * The run's header line (RunView's and WatchView's): a hub policy's model id with the commit it
 * loaded, short, the full id on hover; a bundled model or a folder with none.
 */
import '../app.css';
import { describe, expect, it } from 'vitest';
import { render } from '../../../test/support/views/testing';
import type { RunRecord } from '../../rl/records';
import RunSummary from './RunSummary.svelte';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';

function summary(config: Record<string, unknown>) {
  using view = render(RunSummary, { records: [], config });
  const commit = view.target.querySelector<HTMLElement>('[data-testid="policy-commit"]');
  return { text: view.target.textContent!.replace(/\s+/g, ' ').trim(), commit: commit && { text: commit.textContent, title: commit.title } };
}

describe('the run header names the hub commit its policy loaded', () => {
  it('shows the first 7 hex digits beside the model id, the full commit as its title', () => {
    const run = summary({
      models: { policy: { model: 'Qwen/Qwen3-0.6B', backend: 'cpu', revision: COMMIT } },
      modelRefs: { policy: { id: 'Qwen/Qwen3-0.6B', revision: COMMIT } },
    });
    expect(run.commit).toEqual({ text: '0123456', title: COMMIT });
    expect(run.text).toMatch(/Qwen\/Qwen3-0\.6B @ 0123456 on cpu$/);
  });

  it('shows none for a bundled model, a folder, or a revision that is a branch', () => {
    for (const policy of [
      { model: 'bundled:storyteller-demo', backend: 'cpu' },
      { model: 'my-model', backend: 'webgpu' },
      { model: 'Qwen/Qwen3-0.6B', backend: 'webgpu', revision: 'main' },
    ]) {
      const run = summary({ models: { policy } });
      expect(run.commit).toBeNull();
      expect(run.text).toMatch(new RegExp(`${policy.model.replace(/[/.]/g, '\\$&')} on ${policy.backend}$`));
    }
  });
});

describe('the run header counts the turns no judge saw', () => {
  it('counts each session that ended with its turn still waiting, and says nothing where none did', () => {
    const end = (session: string, unjudgedTurn?: number) => ({
      kind: 'session_end' as const,
      version: 0,
      ts: 1,
      session,
      reason: 'timeout' as const,
      turns: 2,
      mainTurns: 2,
      ...(unjudgedTurn ? { unjudgedTurn } : {}),
    });
    const text = (records: RunRecord[]) => {
      using view = render(RunSummary, { records, config: { models: { policy: { model: 'm', backend: 'cpu' } } } });
      return view.target.querySelector('[data-testid="unjudged-turns"]')?.textContent ?? null;
    };
    expect(text([end('a', 2), end('b'), end('c', 1)])).toBe('2 unjudged ·');
    expect(text([end('b')])).toBeNull();
  });
});
