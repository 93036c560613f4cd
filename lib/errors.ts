// Errors a user can act on (bad option, missing input): shown as one line, without a stack trace.
import { ZodError } from 'zod';

export class UserError extends Error {
  override name = 'UserError';
}

/** A one-line description of a zod validation failure, naming each bad field. */
export function describeZodError(err: ZodError, prefix = ''): string {
  return err.issues
    .map((i) => {
      const where = i.path.length > 0 ? `${prefix}${i.path.join('.')}: ` : prefix ? `${prefix.replace(/\.$/, '')}: ` : '';
      return `${where}${i.message}`;
    })
    .join('; ');
}
