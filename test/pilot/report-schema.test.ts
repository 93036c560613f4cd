// pilot-report.schema.json is generated from the zod schema of the report: the committed file
// must be what `npm run schemas` writes today, and it must still refuse what a report may not be.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { PILOT_REPORT_SCHEMA_FILE, pilotReportSchemaText } from '../../pilot/pilot-report-schema.ts';


const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

describe('pilot-report.schema.json', () => {
  it('is what npm run schemas generates from the zod schema (run it after changing pilot/pilot-report-schema.ts)', () => {
    expect(fs.readFileSync(PILOT_REPORT_SCHEMA_FILE, 'utf8')).toBe(pilotReportSchemaText());
  });

  it('is a strict JSON Schema 2020-12 that refuses extra, missing and out-of-range fields', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    const schema = JSON.parse(fs.readFileSync(PILOT_REPORT_SCHEMA_FILE, 'utf8')) as Record<string, unknown>;
    const validate = ajv.compile(schema);
    expect(schema['$id']).toMatch(/pilot-report\.schema\.json$/);
    const props = schema['properties'] as Record<string, Record<string, unknown>>;
    // The two objects docs/api.md fixes, by their field names.
    const defs = schema['$defs'] as Record<string, Record<string, unknown>>;
    expect(Object.keys(defs['Cost']!['properties'] as object)).toEqual(['currency', 'offloadedGb', 'cdnPricePerGb', 'assumedRate', 'avoidedCdnCost', 'savingsSharePct', 'fee', 'netSavings']);
    expect(Object.keys(props['conclusion']!['properties'] as object)).toEqual(['assessment', 'criteria', 'risks', 'requiredFixes', 'operator']);
    expect(validate({})).toBe(false);
    expect(validate({ reportVersion: 1, extra: true })).toBe(false);
  });
});
