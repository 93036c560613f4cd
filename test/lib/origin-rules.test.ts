// The origin rules of docs/api.md as tables: which entries are valid and how they are stored,
// and which manifest URLs an allowlist allows.
import { describe, expect, it } from 'vitest';
import { checkManifestUrl, normaliseOrigin, urlAllowed, validateOrigins } from '../../lib/origin-rules.ts';

describe('origin entries', () => {
  const valid: [string, string][] = [
    ['https://cdn.example.com', 'https://cdn.example.com'],
    ['https://cdn.example.com/', 'https://cdn.example.com'],
    ['https://cdn.example.com/live', 'https://cdn.example.com/live'],
    ['https://cdn.example.com/live/', 'https://cdn.example.com/live'],
    ['HTTPS://CDN.Example.COM/Live', 'https://cdn.example.com/Live'], // scheme and host lower-cased, path kept
    ['https://cdn.example.com:443/live', 'https://cdn.example.com/live'], // default port dropped
    ['http://cdn.example.com:80', 'http://cdn.example.com'],
    ['http://cdn.example.com:8080/a', 'http://cdn.example.com:8080/a'],
    ['https://cdn.example.com/a/../b', 'https://cdn.example.com/b'],
    ['https://[2001:DB8::1]:8443/hls', 'https://[2001:db8::1]:8443/hls'], // IPv6
    ['https://[::1]', 'https://[::1]'],
    ['https://bücher.example/video', 'https://xn--bcher-kva.example/video'], // IDN, stored as ASCII
    ['https://192.0.2.10/x', 'https://192.0.2.10/x'],
    [`https://cdn.example.com/${'a'.repeat(2048 - 'https://cdn.example.com/'.length)}`, `https://cdn.example.com/${'a'.repeat(2048 - 'https://cdn.example.com/'.length)}`],
  ];
  for (const [entry, stored] of valid) {
    it(`accepts ${entry.slice(0, 60)} as ${stored.slice(0, 60)}`, () => {
      expect(normaliseOrigin(entry)).toEqual({ ok: true, origin: stored });
    });
  }

  const invalid: [unknown, RegExp][] = [
    ['javascript:alert(1)', /http:\/\/ or https:\/\//],
    ['ftp://files.example.com/x', /http:\/\/ or https:\/\//],
    ['file:///etc/passwd', /http:\/\/ or https:\/\//],
    ['http://', /not a valid URL/],
    ['https://', /not a valid URL/],
    ['cdn.example.com/live', /http:\/\/ or https:\/\//],
    ['//cdn.example.com', /http:\/\/ or https:\/\//],
    ['https://user:pw@cdn.example.com', /credentials/],
    ['https://user@cdn.example.com', /credentials/],
    ['https://cdn.example.com/#frag', /fragment/],
    ['https://cdn.example.com#', /fragment/],
    ['https://cdn.example.com?q=1', /query/],
    ['https://cdn.example.com/live?', /query/],
    ['https://cdn.example.com:99999', /not a valid URL/],
    ['https://cdn.example.com:0', /port 0/],
    ['https://exa mple.com', /not a valid URL/],
    [' https://cdn.example.com', /white space/],
    ['', /empty/],
    [`https://cdn.example.com/${'a'.repeat(2049 - 'https://cdn.example.com/'.length)}`, /longer than 2048/],
    [42, /must be a string, not number/],
    [null, /must be a string, not null/],
    [['https://cdn.example.com'], /must be a string, not an array/],
    [{ url: 'https://cdn.example.com' }, /must be a string, not object/],
  ];
  for (const [entry, reason] of invalid) {
    it(`refuses ${JSON.stringify(entry)?.slice(0, 60)}`, () => {
      const r = normaliseOrigin(entry);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(reason);
    });
  }

  it('validates a list: each problem with its index, or the normalised list de-duplicated in order', () => {
    expect(validateOrigins(['https://B.example/x/', 'https://a.example', 'https://b.example/x', 'https://a.example:443/'])).toEqual({
      ok: true,
      origins: ['https://b.example/x', 'https://a.example'],
    });
    const bad = validateOrigins(['https://ok.example', 'ftp://x', 7, 'https://u:p@h']);
    expect(bad).toEqual({
      ok: false,
      problems: [
        { index: 1, value: 'ftp://x', reason: expect.stringMatching(/http/) },
        { index: 2, value: 7, reason: expect.stringMatching(/string/) },
        { index: 3, value: 'https://u:p@h', reason: expect.stringMatching(/credentials/) },
      ],
    });
    expect(validateOrigins(Array.from({ length: 501 }, (_, i) => `https://h${i}.example`))).toMatchObject({
      ok: false,
      problems: [{ index: null, reason: 'at most 500 entries (got 501)' }],
    });
    expect(validateOrigins(Array.from({ length: 500 }, (_, i) => `https://h${i}.example`))).toMatchObject({ ok: true });
    expect(validateOrigins({ origins: [] })).toMatchObject({ ok: false, problems: [{ index: null }] });
    expect(validateOrigins([])).toEqual({ ok: true, origins: [] });
  });
});

describe('allow and deny', () => {
  const table: [string[], string, boolean][] = [
    [['https://cdn.example.com/live'], 'https://cdn.example.com/live/a.m3u8', true],
    [['https://cdn.example.com/live'], 'https://cdn.example.com/live', true],
    [['https://cdn.example.com/live'], 'https://cdn.example.com/live/', true],
    [['https://cdn.example.com/live'], 'https://cdn.example.com/live/a.m3u8?token=abc#t=10', true],
    [['https://cdn.example.com/live'], 'https://CDN.EXAMPLE.COM/live/a.m3u8', true],
    [['https://cdn.example.com/live'], 'https://cdn.example.com:443/live/a.m3u8', true],
    [['https://cdn.example.com/live'], 'https://cdn.example.com/liveevil/a.m3u8', false],
    [['https://cdn.example.com/live'], 'https://cdn.example.com/Live/a.m3u8', false],
    [['https://cdn.example.com/live'], 'https://cdn.example.com/live/../secret/a.m3u8', false],
    [['https://cdn.example.com/live'], 'https://cdn.example.com.evil.net/live/a.m3u8', false],
    [['https://cdn.example.com/live'], 'https://evil.net/cdn.example.com/live/a.m3u8', false],
    [['https://cdn.example.com/live'], 'http://cdn.example.com/live/a.m3u8', false],
    [['https://cdn.example.com/live'], 'https://cdn.example.com:8443/live/a.m3u8', false],
    [['https://cdn.example.com/live'], 'https://sub.cdn.example.com/live/a.m3u8', false],
    [['https://cdn.example.com'], 'https://cdn.example.com/anything/at/all.m3u8', true],
    [['http://cdn.example.com:8080'], 'http://cdn.example.com:8080/x', true],
    [['http://cdn.example.com:8080'], 'http://cdn.example.com/x', false],
    [['https://[2001:db8::1]/hls'], 'https://[2001:DB8::1]/hls/a.m3u8', true],
    [['https://xn--bcher-kva.example'], 'https://bücher.example/v.m3u8', true],
    [['https://a.example', 'https://b.example/x'], 'https://b.example/x/y', true],
    [[], 'https://cdn.example.com/live/a.m3u8', false],
  ];
  for (const [allowlist, url, allowed] of table) {
    it(`${allowed ? 'allows' : 'denies'} ${url} under ${JSON.stringify(allowlist)}`, () => {
      const checked = checkManifestUrl(url);
      expect(checked.ok).toBe(true);
      if (checked.ok) expect(urlAllowed(checked.url, allowlist)).toBe(allowed);
    });
  }

  it('refuses to consider URLs that are not http(s) or carry credentials', () => {
    for (const [url, reason] of [
      ['ftp://cdn.example.com/live/a.m3u8', /http/],
      ['https://user:pw@cdn.example.com/live/a.m3u8', /credentials/],
      ['not a url', /valid absolute URL/],
      ['', /non-empty/],
    ] as const) {
      const r = checkManifestUrl(url);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(reason);
    }
  });
});
