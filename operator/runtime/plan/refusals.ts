/**
 * Refused children: the API server's refusals (422 Invalid, 400 BadRequest) and the changes the
 * runtime refuses itself before asking, as the API server would (storage-growth.ts). Both are
 * reported alike: `Available=False ChildRefused` and `Stalled`, not retried until something changes.
 */
import { type ApiError, isForbidden, isInvalid } from '../client';

/** A change of a child the runtime refuses before asking the API server, as the API server would refuse it. */
export class ChildRefusedUpFront extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChildRefusedUpFront';
  }
}

/**
 * An RBAC denial's words (`User "…" cannot patch resource "…"`): the operator lacks a right, which
 * an admin may grant at any time, so the write is retried; the spec is not at fault.
 */
const RBAC_DENIAL = /\bcannot [a-z]+ resource "/;

/**
 * Whether the API server refused a child's write for what it asks, so the same write cannot
 * succeed: invalid (422, 400), or refused at admission (403 that is not a missing right: a quota,
 * or a plugin such as the one refusing to resize a claim whose StorageClass cannot expand).
 */
export function isRefusedWrite(err: unknown): err is ApiError {
  return isInvalid(err) || (isForbidden(err) && !RBAC_DENIAL.test(err.message));
}

/** Whether an error (a terminal error's cause) is a child refused, by the API server or up front. */
export function isChildRefusal(err: unknown): boolean {
  return isRefusedWrite(err) || err instanceof ChildRefusedUpFront;
}
