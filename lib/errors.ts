// The internal errors' base and the two the CLI shows as one line: errors a user can act on (bad
// option, missing input) and failures that end a command with a given exit code. Each error's code
// and exit code come from the catalogue (lib/error-catalogue.ts).
import { ZodError } from 'zod';
import { EXIT, exitCodeOfKind, type ErrorCode } from './error-catalogue.ts';

export { EXIT, EXIT_CODES, INTERNAL_ERRORS, type ErrorCode, type ExitName } from './error-catalogue.ts';

/** An error of the catalogue: its `errorCode` names its entry (meaning, exit code, HTTP problem). */
export abstract class InternalError extends Error {
  abstract readonly errorCode: ErrorCode;
}

export class UserError extends InternalError {
  override name = 'UserError';
  readonly errorCode: ErrorCode = 'user_error';
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

/** A failure that ends a command with a given exit code (EXIT, lib/error-catalogue.ts), shown as one line. */
export class ExitError extends InternalError {
  override name = 'ExitError';
  readonly errorCode: ErrorCode = 'exit';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** The exit code of a command that ends on `err`: its catalogue entry's; a zod failure is a usage error; anything else failed. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof ExitError) return err.exitCode;
  if (err instanceof InternalError) return exitCodeOfKind(err.errorCode);
  if (err instanceof ZodError) return EXIT.usage;
  return EXIT.failed;
}
