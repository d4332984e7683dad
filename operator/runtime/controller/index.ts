/**
 * Controllers and the manager that runs them: informers shared, workers, the health and metrics
 * endpoints, leader election and graceful shutdown; and which errors are terminal.
 *
 * This file is the folder's face: code outside the folder imports it from here alone.
 */
export { Controller } from './controller';
export type { ControllerSetupOptions, ReconcileContext, Reconciler, Request, Result } from './controller';
export { asTerminal, isTerminal, TerminalError } from './errors';
export { Manager, mountedCertificate, parseBindAddress } from './manager';
export type { ManagerOptions } from './manager';
