/**
 * The contract between a kind's declaration (constructs) and the reconciler that runs it
 * (operator): the object model, resource types and the declaration. Pure types and functions.
 */
export type {
  ConfigMap,
  ContainerState,
  CoreEvent,
  CronJob,
  CustomResourceObject,
  Deployment,
  Ingress,
  InvolvedObject,
  Job,
  KubeObject,
  ObjectMeta,
  OwnerReference,
  Pod,
  Secret,
  StatefulSet,
  WorkloadCondition,
} from './objects';
export { BuiltinTypes, ChildMap, childKey, customResourceType } from './resource-types';
export type { Children, ResourceType } from './resource-types';
export { finalizerName, validateControllerDeclaration } from './declaration';
export { isNamespaceTerminating, TerminalError } from './errors';
export type {
  ControllerDeclaration,
  EventSpec,
  ExternalStep,
  AdmissionContext,
  CacheReads,
  FieldProblem,
  FinalizeContext,
  FinalizeOutcome,
  Observed,
  OwnerReferenceLike,
  PrepareApi,
  Problem,
  StatusOf,
} from './declaration';
