import { describe, expect, it } from 'vitest';
import { decodeBase64, encodeBase64 } from './base64';
import { formatBytes, utf8Length } from '../base/bytes';
import { isSecretKey, looksLikeSecret, stripSecrets } from './secrets';

describe('isSecretKey', () => {
  it.each([
    'apiKey',
    'api_key',
    'API-KEY',
    'x-api-key',
    'openaiApiKey',
    'Authorization',
    'token',
    'hf_token',
    'accessToken',
    'secret',
    'client_secret',
    'password',
    'cookie',
  ])('%s is a secret', (k) => expect(isSecretKey(k)).toBe(true));
  it.each(['maxNewTokens', 'tokens', 'tokenIds', 'endpoint', 'model', 'keyboard', 'author', 'teacherLogpCount'])('%s is not', (k) =>
    expect(isSecretKey(k)).toBe(false),
  );
  // Names the review found passing through.
  it.each([
    'key',
    'KEY',
    'openaiKey',
    'openai_key',
    'OPENAI_KEY',
    'anthropicKey',
    'secretKey',
    'secret_key',
    'signingKey',
    'credential',
    'awsCredential',
    'passphrase',
    'sshPassphrase',
    'jwt',
    'authJwt',
    'pat',
    'APIKey',
  ])('%s is a secret too', (k) => expect(isSecretKey(k)).toBe(true));
  it.each(['sortKey', 'cache_key', 'primaryKey', 'publicKey', 'hotkey', 'monkey', 'keys', 'keyId', 'turnKeys', 'patience', 'path', 'compat'])(
    '%s is not either',
    (k) => expect(isSecretKey(k)).toBe(false),
  );
});

describe('looksLikeSecret', () => {
  it.each([
    'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345',
    'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx',
    'Bearer eyJhbGciOiJIUzI1NiJ9.payload',
    'authorization: bearer abcdefgh12345678',
    'hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567',
    'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789',
    'xoxb-1234567890-abcdefghij',
    'AKIAIOSFODNN7EXAMPLE',
    'AIzaSyA-abcdefghijklmnopqrstuvwxyz012345',
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
    '-----BEGIN OPENSSH PRIVATE KEY-----\nabc',
    'https://api.example/v1?key=sk-AbCdEfGhIjKlMnOpQrStUvWx',
  ])('%s looks like a secret', (v) => expect(looksLikeSecret(v)).toBe(true));
  it.each(['sk-learn', 'scikit-learn', 'Qwen/Qwen3-0.6B', 'http://localhost:8000/v1', 'Bearer', 'task-1234567890abcdefghijklmnop', 'the bearer of bad news'])(
    '%s does not',
    (v) => expect(looksLikeSecret(v)).toBe(false),
  );
});

describe('stripSecrets', () => {
  it('drops secret keys at any depth, in objects and arrays, without touching the input', () => {
    const input = {
      a: 1,
      apiKey: 'x',
      list: [{ token: 'y', keep: [1, { secret: 'z', ok: true }] }],
      nested: { headers: { Authorization: 'b', Accept: 'json' } },
    };
    expect(stripSecrets(input)).toEqual({ a: 1, list: [{ keep: [1, { ok: true }] }], nested: { headers: { Accept: 'json' } } });
    expect(input.apiKey).toBe('x');
  });

  it('drops secret-shaped values under innocent names, and newly covered names', () => {
    const input = {
      endpoint: 'https://api.openai.com/v1',
      note: 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345',
      headers: { 'X-Custom': 'Bearer abcdefgh12345678' },
      list: ['ok', 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567'],
      judge: { openaiKey: 'x', secretKey: 'y', credential: 'z', passphrase: 'p', jwt: 'j', key: 'k', model: 'gpt' },
    };
    expect(stripSecrets(input)).toEqual({ endpoint: 'https://api.openai.com/v1', headers: {}, list: ['ok', null], judge: { model: 'gpt' } });
  });

  it('names local folders by their last segment only when asked (for copies that leave the machine)', () => {
    const input = {
      models: { policy: { model: '/home/alice/secret-project/Qwen3-0.6B' }, judge: { model: 'Qwen/Qwen3-0.6B' } },
      dir: 'C:\\Users\\alice\\m',
      text: '/x\nnot a path',
    };
    expect(stripSecrets(input)).toEqual(input);
    expect(stripSecrets(input, { localPaths: 'name' })).toEqual({
      models: { policy: { model: 'Qwen3-0.6B' }, judge: { model: 'Qwen/Qwen3-0.6B' } },
      dir: 'm',
      text: '/x\nnot a path',
    });
  });
});

describe('base64', () => {
  it('round-trips every length and byte value, matching the platform encoder', () => {
    for (let n = 0; n < 70; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n * 11) % 256);
      const text = encodeBase64(bytes);
      expect(text).toBe(btoa(String.fromCharCode(...bytes)));
      expect(decodeBase64(text)).toEqual(bytes);
    }
    const big = Uint8Array.from({ length: 200_003 }, (_, i) => i % 251);
    expect(decodeBase64(encodeBase64(big))).toEqual(big);
  });

  it('refuses anything but canonical base64', () => {
    for (const bad of ['A', 'AAA', 'AA=A', '=AAA', 'A\u00e9AA', 'AA AA', 'AAA==AAA']) expect(() => decodeBase64(bad), bad).toThrow(/base64/);
  });
});

describe('bytes', () => {
  it('formats sizes in decimal units and counts UTF-8 bytes', () => {
    expect([0, 999, 1000, 12_345, 999_000_000, 1e9, 2.5e12].map(formatBytes)).toEqual([
      '0 bytes',
      '999 bytes',
      '1.0 kB',
      '12 kB',
      '999 MB',
      '1.0 GB',
      '2.5 TB',
    ]);
    for (const s of ['', 'abc', 'é', '€', '\u{1F389}', 'a\u{1F389}b€é', '\ud800 lone']) expect(utf8Length(s)).toBe(new TextEncoder().encode(s).length);
  });
});
