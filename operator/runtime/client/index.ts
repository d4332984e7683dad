/**
 * The API server's client: the verbs over HTTP, where the server is and how to authenticate, REST
 * paths, and what our field manager owns of an object (server-side apply's bookkeeping).
 *
 * This file is the folder's face: code outside the folder imports it from here alone.
 */
export { microTime } from './api-time';
export { HttpKubeClient } from './client';
export { RateLimiter } from './rate-limiter';
export { ApiError, isConflict, isForbidden, isGone, isInvalid, isNotFound } from './errors';
export type {
  JsonPatchOperation,
  MergePatchOptions,
  KubeClient,
  KubeClientOptions,
  KubeList,
  ListOptions,
  WatchErrorStatus,
  WatchEvent,
  WatchOptions,
} from './client';
export { appliedFieldChanges, changeableFields, fieldChanges } from './field-changes';
export type { FieldChange } from './field-changes';
export { ClusterConfig, loadKubeConfig } from './kubeconfig';
export type { KubeConfigLike, LoadKubeConfigOptions } from './kubeconfig';
export { ProtoReader, readMapEntry, readTime, tag, WIRE_BYTES, WIRE_VARINT } from './protobuf';
export type { ObjectDecoder } from './protobuf';
export { appliedEntry, extractApplied, needsApply, sameJson } from './managed-fields';
export type { FieldSet } from './managed-fields';
export type { ClientSpan, RequestTracer, SpanAttributes } from './request-tracing';
export {
  apiVersionOf,
  controllerOf,
  deepFreeze,
  objectKey,
  resourcePath,
  splitKey,
  withoutBookkeeping,
} from './resource';
