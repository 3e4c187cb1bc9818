import { describe, expect, it } from 'vitest';
import { connectSources } from '../../deploy/headers';
import { connectBlocked } from './page-csp';

describe('what the Setup says of an address the page’s CSP refuses', () => {
  const sources = connectSources(['http://localhost:11434']);
  const lab = new URL('https://lab.example/');

  it('says nothing for what connect-src allows (the default nextstate serve, a built-in endpoint) or when it cannot tell', () => {
    expect(connectBlocked('http://127.0.0.1:30000/v1', sources, lab)).toBe('');
    expect(connectBlocked('http://localhost:11434/v1', sources, lab)).toBe('');
    expect(connectBlocked('not a url', sources, lab)).toBe('');
    expect(connectBlocked('http://10.0.0.5:8000/v1', null, lab)).toBe('');
  });

  it('names the origin and how to allow it, for an endpoint or a policy server alike', () => {
    expect(connectBlocked(' http://10.0.0.5:8000/v1 ', sources, lab)).toBe(
      'This lab’s Content-Security-Policy does not let it reach http://10.0.0.5:8000. Build the lab with NEXTSTATE_CONNECT_SRC="http://10.0.0.5:8000" (or add it to connect-src in the host’s headers file; docs/deploying.md).',
    );
  });
});
