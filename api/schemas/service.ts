// Service routes (liveness, readiness) and the problem+json body of every error.
import { z } from 'zod';
import { isoInstant } from '../../lib/json-schema.ts';

export const HealthSchema = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });
export const ReadySchema = z.object({ status: z.literal('ready'), snapshot: z.string(), asOf: isoInstant() }).meta({ id: 'Ready' });

/** RFC 9457, with the stable `code` of docs/api.md; problems may carry more fields. */
export const ProblemSchema = z
  .looseObject({
    type: z.string().meta({ format: 'uri-reference' }),
    title: z.string(),
    status: z.int().min(400).max(599),
    detail: z.string(),
    code: z.string().regex(/^[a-z_]+$/),
  })
  .meta({ id: 'Problem' });

export const InvalidOriginsProblemSchema = ProblemSchema.extend({
  errors: z.array(z.object({ index: z.int().nullable(), value: z.unknown(), reason: z.string() })).optional().describe('invalid_origins: each invalid entry and why'),
}).meta({ id: 'InvalidOriginsProblem' });
