import { type ApiError, isInvalid } from './client';

/**
 * An error that retrying cannot fix (controller-runtime's `reconcile.TerminalError`, kube-rs's
 * error policy returning "await change"): the spec asks for something that cannot be, or the
 * API server refused a request as invalid. Any step of a reconcile may throw it. The runtime does
 * not retry it until the resource's spec changes (its generation); the status says
 * `Degraded=True` with its `reason` and message, one Warning Event is recorded, and
 * `controller_runtime_terminal_reconcile_errors_total` counts it.
 */
export class TerminalError extends Error {
  /**
   * @param message what is wrong and, where it can, how to fix it
   * @param reason a CamelCase reason for the `Degraded` condition and the Warning Event
   */
  constructor(
    message: string,
    readonly reason = 'TerminalError',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

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
  if (isInvalid(err)) return new TerminalError((err as ApiError).message.slice(0, 1024), 'Invalid', { cause: err });
  return undefined;
}
