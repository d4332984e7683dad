/**
 * `cdk8s-operator-kit/reconciler`: the run-time half. A reconciler image's entry point calls
 * `runOperator` with its controllers; the pieces below are for those who assemble their own: the
 * controller builder, the manager, the client's verbs and errors, the informer, Events, metrics
 * and tracing. The client's wire helpers (protobuf reading, managed-fields bookkeeping) stay inside.
 *
 * @module cdk8s-operator-kit/reconciler
 */
export { runOperator } from './run';
export type { RunOperatorOptions } from './run';
export { buildController } from './runtime/reconcile';
export {
  Controller,
  type ControllerSetupOptions,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
  Manager,
  type ManagerOptions,
  asTerminal,
  isTerminal,
  TerminalError,
} from './runtime/controller';
export { Informer } from './runtime/cache';
export {
  ApiError,
  HttpKubeClient,
  isConflict,
  isGone,
  isInvalid,
  isNotFound,
  type KubeClient,
  type KubeList,
  type ListOptions,
  type MergePatchOptions,
  type WatchErrorStatus,
  type WatchEvent,
  type WatchOptions,
  type KubeClientOptions,
  ClusterConfig,
  loadKubeConfig,
  type KubeConfigLike,
  type LoadKubeConfigOptions,
} from './runtime/client';
export { EventRecorder, Metrics, type ClientSpan, type SpanAttributes, type Tracer } from './runtime/observability';
export { renderChildren } from './runtime/children';
export type { KubeObject } from '../constructs/contract';
