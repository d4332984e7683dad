import { isJsonObject } from './json';
/**
 * An error that retrying cannot fix (controller-runtime's `reconcile.TerminalError`, kube-rs's
 * error policy returning "await change"): the spec asks for something that cannot be, or the
 * API server refused a request as invalid. Any step of a reconcile may throw it, a declaration's
 * functions too (it is part of the contract). The runtime does not retry it until the
 * resource's spec changes (its generation); the status says `Degraded=True` with its `reason`
 * and message, one Warning Event is recorded, and
 * `controller_runtime_terminal_reconcile_errors_total` counts it. (A `finalize` step's is the
 * exception: retried with backoff, see `ControllerDeclaration.finalize`.)
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

/**
 * Whether an error is the API server refusing to create an object because its namespace is
 * being deleted (403 with the cause NamespaceTerminating): nothing new can be made there.
 */
export function isNamespaceTerminating(err: unknown): boolean {
  // A StatusCause's type is serialized as `reason`.
  if (!isJsonObject(err) || err.status !== 403 || !isJsonObject(err.details)) return false;
  const causes = err.details.causes;
  return Array.isArray(causes) && causes.some((c) => isJsonObject(c) && c.reason === 'NamespaceTerminating');
}
