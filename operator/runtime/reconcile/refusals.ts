/**
 * Refused children: the API server's refusals (422 Invalid, 400 BadRequest) and the changes the
 * runtime refuses itself before asking, as the API server would (storage-growth.ts). Both are
 * reported alike: `Available=False ChildRefused` and `Stalled`, not retried until something changes.
 */
import { isInvalid } from '../client';

/** A change of a child the runtime refuses before asking the API server, as the API server would refuse it. */
export class ChildRefusedUpFront extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChildRefusedUpFront';
  }
}

/** Whether an error (a terminal error's cause) is a child refused, by the API server or up front. */
export function isChildRefusal(err: unknown): boolean {
  return isInvalid(err) || err instanceof ChildRefusedUpFront;
}
