import * as http from 'node:http';

/** An error answer from the API server, with its HTTP status and Kubernetes reason. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly details?: unknown,
    /** The wait, in seconds, a `Retry-After` header of the answer asked for before the request is sent again. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const isNotFound = (e: unknown) => e instanceof ApiError && e.status === 404;
export const isConflict = (e: unknown) => e instanceof ApiError && e.status === 409;
export const isGone = (e: unknown) =>
  e instanceof ApiError && (e.status === 410 || e.reason === 'Expired' || e.reason === 'Gone');
/** 403 Forbidden: no right, or a quota or admission plugin refused the request. */
export const isForbidden = (e: unknown): e is ApiError => e instanceof ApiError && e.status === 403;
/** 422 Invalid, 400 BadRequest: retrying the same request cannot succeed. */
export const isInvalid = (e: unknown): e is ApiError => e instanceof ApiError && (e.status === 422 || e.status === 400);

/** A metav1.Status, the body of every API error answer; anything else is kept as text. */
interface StatusBody {
  reason?: string;
  message?: string;
  details?: unknown;
}

/** The ApiError of an error answer: its HTTP status, and the reason and message its Status body gives. */
export function toApiError(status: number, body: unknown, what: string, retryAfterSeconds?: number): ApiError {
  const s: StatusBody = typeof body === 'object' && body !== null ? body : {};
  const reason = s.reason ?? http.STATUS_CODES[status] ?? 'Unknown';
  const message = s.message ?? (typeof body === 'string' ? body : '');
  const text = `${what}: ${status} ${reason}${message ? `: ${message}` : ''}`;
  return new ApiError(status, reason, text, s.details, retryAfterSeconds);
}

/** The seconds a `Retry-After` header asks to wait (the API server sends whole seconds), or undefined without one. */
export function retryAfterSeconds(header: string | string[] | undefined): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}
