/**
 * The work queue (de-duplicating, one reconcile per key, two priorities) and its rate limits and backoff.
 *
 * This file is the folder's face: code outside the folder imports it from here alone.
 */
export { exponentialDelay, jitter, realClock, sleep } from './backoff';
export type { Clock } from './backoff';
export { RateLimiter, WorkQueue } from './workqueue';
export type { Priority, QueueMetrics, RateLimiterOptions } from './workqueue';
