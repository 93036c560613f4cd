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

/**
 * Exit codes of the CLI (docs/operations.md lists them): 1 a failure, 2 a usage error or a refused
 * input (nothing written). The others name a state an operator or a scheduler must act on.
 */
export const EXIT = {
  failed: 1,
  usage: 2,
  /** The snapshot was written but not published: CURRENT holds an asOf ahead of the clock. */
  blockedByFutureSnapshot: 3,
  /** Another run of the same asOf holds the run lock. */
  alreadyRunning: 4,
  /** The run finished, but some of its parts (customers, streams) failed. */
  partlyFailed: 5,
  /** Nothing is published yet (no CURRENT), or what is published cannot be read. */
  nothingPublished: 6,
  /** `verify-report`: a statement does not verify, or a report's bytes differ from what it signs. */
  verificationFailed: 7,
} as const;

/** A failure that ends a command with a given exit code, shown as one line. */
export class ExitError extends Error {
  override name = 'ExitError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}
