/**
 * A declared controller's reconcile: built from the declaration, its steps in order (observe, finalize,
 * external, render, apply, prune, status, events), the finalizer, and when status is written.
 *
 * This file is the folder's face: code outside the folder imports it from here alone.
 */
export { buildController, DEFAULT_STATUS_COALESCE_MS } from './builder';
