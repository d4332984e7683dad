import { TerminalError } from '../../../constructs/contract';
import { isInvalid } from '../client';

export { TerminalError };

export function isTerminal(err: unknown): err is TerminalError {
  return err instanceof TerminalError;
}

/**
 * The terminal form of an error, when it is one: a TerminalError as it is, and an answer of the
 * API server that refuses the request itself (400 BadRequest, 422 Invalid) — sending the same
 * request again cannot succeed. Undefined for anything retrying may fix.
 */
export function asTerminal(err: unknown): TerminalError | undefined {
  if (isTerminal(err)) return err;
  if (isInvalid(err)) return new TerminalError(err.message.slice(0, 1024), 'Invalid', { cause: err });
  return undefined;
}
