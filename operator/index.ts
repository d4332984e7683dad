/**
 * `cdk8s-operator-kit/reconciler`: the run-time half. A reconciler image's entry point calls
 * `runOperator` with its controllers; the pieces below are for those who assemble their own.
 *
 * @module cdk8s-operator-kit/reconciler
 */
export { runOperator } from './run';
export type { RunOperatorOptions } from './run';
export { buildController } from './runtime/builder';
export { Controller } from './runtime/controller';
export type { ControllerSetupOptions, ReconcileContext, Reconciler, Request, Result } from './runtime/controller';
export { Manager } from './runtime/manager';
export type { ManagerOptions } from './runtime/manager';
export { Informer } from './runtime/informer';
export { ApiError, HttpKubeClient, isConflict, isGone, isInvalid, isNotFound } from './runtime/client';
export type { KubeClient, KubeList, WatchEvent } from './runtime/client';
export { asTerminal, isTerminal, TerminalError } from './runtime/errors';
export type { KubeClientOptions } from './runtime/client';
export { ClusterConfig, loadKubeConfig } from './runtime/kubeconfig';
export type { KubeConfigLike, LoadKubeConfigOptions } from './runtime/kubeconfig';
export { EventRecorder } from './runtime/events';
export { Metrics } from './runtime/metrics';
export type { ClientSpan, SpanAttributes, Tracer } from './runtime/tracing';
export { extractApplied, needsApply } from './runtime/managed-fields';
export { renderChildren } from './runtime/render';
export type { KubeObject } from '../constructs/contract';
