/**
 * The contract between a kind's declaration (constructs) and the reconciler that runs it
 * (operator): the object model, resource types and the declaration. Pure types and functions.
 */
export type {
  ConfigMap,
  ContainerState,
  CoreEvent,
  ContainerStatus,
  CronJob,
  CustomResourceObject,
  DaemonSet,
  Deployment,
  Ingress,
  InvolvedObject,
  Job,
  KubeObject,
  LabelSelector,
  CustomResourceDefinitionObject,
  Lease,
  LeaseSpec,
  LoadBalancerStatus,
  ObjectMeta,
  OwnerReference,
  PersistentVolumeClaim,
  Pod,
  ReplicaSet,
  Secret,
  Service,
  StatefulSet,
  StorageClass,
  WorkloadCondition,
} from './objects';
export { BuiltinTypes, ChildMap, childKey, customResourceType, isOfType } from './resource-types';
export { isKubeObject } from './objects';
export type { Children, ResourceType } from './resource-types';
export {
  declarationsIn,
  finalizerName,
  healthReads,
  ownsStatefulSets,
  validateControllerDeclaration,
} from './declaration';
export {
  claimSizeVerdict,
  claimsOfStatefulSet,
  claimTemplateChanges,
  claimTemplateOf,
  claimTemplateSizes,
  compareQuantities,
  growthNote,
  shrinkRefusal,
  storageRequest,
  withCurrentClaimSizes,
} from './claim-sizes';
export type { ClaimSizeChange, ClaimTemplateChanges, TemplateClaim } from './claim-sizes';
export { assessChildren, childHealth, waitingOn } from './health';
export { madeBy, podIsReady, podProblem, podWorkloads } from './pod-problems';
export type { ChildHealth, ChildrenHealth, ChildrenInput, Readiness, Verdict } from './health';
export { applyIndependently, chartObjects, waitsFor } from './render';
export { isNamespaceTerminating, TerminalError } from './errors';
export type {
  ControllerDeclaration,
  EventSpec,
  ExternalContext,
  ExternalStep,
  PodRestart,
  PodLabels,
  ClaimToDiscard,
  ExternalWrite,
  AdmissionContext,
  CacheReads,
  FieldProblem,
  FinalizeContext,
  FinalizeOutcome,
  Observed,
  OwnerReferenceLike,
  PrepareApi,
  MadeFor,
  OwnLookup,
  Problem,
  StatusOf,
} from './declaration';
