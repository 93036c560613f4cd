// Checking real responses against the served OpenAPI document: the status must be documented for
// the path and method, and a JSON body must validate against the documented schema (JSON Schema
// 2020-12, as OpenAPI 3.1 uses).
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';
import type { TestResponse } from './api.ts';

type Json = Record<string, unknown>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export class OpenApiChecker {
  private readonly ajv: Ajv2020;
  readonly exercised = new Set<string>();

  constructor(private readonly doc: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...doc, $id: 'api' });
  }

  /** The documented path template that a concrete path matches. */
  template(path: string): string | null {
    const paths = Object.keys(this.doc['paths'] as Json);
    const bare = path.split('?')[0]!;
    // Literal paths win over templated ones (/telemetry/metrics vs /telemetry/metrics/{streamId}).
    if (paths.includes(bare)) return bare;
    for (const p of paths) {
      const re = new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      if (re.test(bare)) return p;
    }
    return null;
  }

  check(method: string, path: string, res: TestResponse): void {
    const template = this.template(path);
    expect(template, `${path} is not in the OpenAPI document`).not.toBeNull();
    const op = ((this.doc['paths'] as Json)[template!] as Json)[method.toLowerCase()] as Json | undefined;
    expect(op, `${method} ${template} is not documented`).toBeDefined();
    this.exercised.add(`${method.toUpperCase()} ${template}`);
    const responses = op!['responses'] as Json;
    expect(Object.keys(responses), `${method} ${path}: status ${res.status} is not documented`).toContain(String(res.status));
    if (res.status === 304) return;
    const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    let response = responses[String(res.status)] as Json;
    if (typeof response['$ref'] === 'string') return;
    const content = response['content'] as Json | undefined;
    // A response documented without content (204) has no body.
    if (content === undefined && res.status === 204) {
      expect(res.text, `${method} ${path} ${res.status}: a body where none is documented`).toBe('');
      return;
    }
    expect(content && Object.keys(content), `${method} ${path} ${res.status}: ${mediaType} is not documented`).toContain(mediaType);
    if (mediaType === 'application/json' || mediaType === 'application/problem+json') {
      const pointer = ['paths', template!, method.toLowerCase(), 'responses', String(res.status), 'content', mediaType, 'schema']
        .map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1'))
        .join('/');
      const validate = this.ajv.getSchema(`api#/${pointer}`) ?? this.ajv.compile({ $ref: `api#/${pointer}` });
      const ok = validate(res.json);
      expect(ok, `${method} ${path} ${res.status}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  }

  /** Documented operations that no check exercised. */
  missing(): string[] {
    const all: string[] = [];
    for (const [p, ops] of Object.entries(this.doc['paths'] as Json)) {
      for (const m of Object.keys(ops as Json)) {
        if (['get', 'put', 'post', 'delete', 'patch', 'head', 'options'].includes(m)) all.push(`${m.toUpperCase()} ${p}`);
      }
    }
    return all.filter((x) => !this.exercised.has(x));
  }
}
