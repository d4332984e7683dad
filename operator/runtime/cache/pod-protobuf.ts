/**
 * A Pod read from its protobuf form straight into what the cache keeps of it (`cacheTransform`'s
 * Pod): the metadata but its managed fields and kubectl's last-applied copy, `spec.nodeName`, the
 * phase, the Ready and PodScheduled=False conditions, and each (init) container's name and state.
 * Everything else — the spec's containers, volumes and tolerations, the other conditions, the
 * container images, IPs and times — is passed over on the wire and never built: a Pod is the
 * heaviest object the runtime watches, and most of its bytes were garbage the moment JSON.parse
 * made them. The result equals `cacheTransform(...)(pod as JSON)`; the unit and integration tests
 * hold the two to that.
 *
 * Field numbers: k8s.io/api core/v1 and apimachinery meta/v1 `generated.proto`.
 */
import type {
  ContainerState,
  ContainerStatus,
  ObjectMeta,
  OwnerReference,
  Pod,
  ResourceType,
} from '../../../constructs/contract';
import {
  type ObjectDecoder,
  type ProtoReader,
  readMapEntry,
  readTime,
  tag,
  WIRE_BYTES as BYTES,
  WIRE_VARINT as VARINT,
} from '../client';
import { LAST_APPLIED } from './cache-transform';

/** A container state as JSON has it: `running` and the times too, which the contract's type leaves out. */
interface WireContainerState extends ContainerState {
  running?: { startedAt: string | null };
  terminated?: NonNullable<ContainerState['terminated']> & {
    signal?: number;
    startedAt?: string | null;
    finishedAt?: string | null;
    containerID?: string;
  };
}

/**
 * How the cache reads a type's protobuf form, where it has a decoder that builds only what
 * `cacheTransform` keeps: Pods. Other types are read as JSON (a child's every field our manager
 * owns is kept, so there is little to skip; custom resources have no protobuf form).
 */
export function cacheDecoder(type: ResourceType): ObjectDecoder | undefined {
  return type.group === '' && type.version === 'v1' && type.kind === 'Pod' ? podFromProtobuf : undefined;
}

/** A Pod's message (`r` at its first field, `end` where it ends) as the cache keeps it. */
export function podFromProtobuf(r: ProtoReader, end: number): Pod {
  let metadata: ObjectMeta = {};
  let nodeName: string | undefined;
  let status: NonNullable<Pod['status']> = { phase: undefined };
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(1, BYTES)) metadata = readObjectMeta(r, r.lengthEnd());
    else if (t === tag(2, BYTES)) nodeName = readNodeName(r, r.lengthEnd());
    else if (t === tag(3, BYTES)) status = readPodStatus(r, r.lengthEnd());
    else r.skip(t & 7);
  }
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: { nodeName }, status };
}

/** ObjectMeta's text fields by tag: JSON leaves them out when empty (`omitempty`), where protobuf sends "". */
const META_TEXT: ReadonlyMap<number, string> = new Map([
  [tag(1, BYTES), 'name'],
  [tag(2, BYTES), 'generateName'],
  [tag(3, BYTES), 'namespace'],
  [tag(4, BYTES), 'selfLink'],
  [tag(5, BYTES), 'uid'],
  [tag(6, BYTES), 'resourceVersion'],
]);

/** ObjectMeta as JSON has it (empty strings and zero numbers left out), without managedFields or last-applied. */
function readObjectMeta(r: ProtoReader, end: number): ObjectMeta {
  const m: ObjectMeta = {};
  while (r.pos < end) {
    const t = r.uint();
    const textKey = META_TEXT.get(t);
    if (textKey !== undefined) {
      const value = r.string();
      if (value) m[textKey] = value;
    } else readOtherMetaField(r, t, m);
  }
  return m;
}

/** ObjectMeta's numbers and times, and the rest. */
function readOtherMetaField(r: ProtoReader, t: number, m: ObjectMeta): void {
  switch (t) {
    case tag(7, VARINT): {
      const generation = r.uint();
      if (generation) m.generation = generation;
      return;
    }
    case tag(8, BYTES):
      m.creationTimestamp = readTime(r, r.lengthEnd()) ?? undefined;
      return;
    case tag(9, BYTES): {
      const at = readTime(r, r.lengthEnd());
      if (at) m.deletionTimestamp = at;
      return;
    }
    case tag(10, VARINT):
      m.deletionGracePeriodSeconds = r.uint();
      return;
    default:
      readMetaCollection(r, t, m);
  }
}

/** ObjectMeta's maps and lists. */
function readMetaCollection(r: ProtoReader, t: number, m: ObjectMeta): void {
  switch (t) {
    case tag(11, BYTES): {
      const [key, value] = readMapEntry(r, r.lengthEnd());
      (m.labels ??= {})[key] = value;
      return;
    }
    case tag(12, BYTES): {
      // The map exists once it has an entry, even when that entry is the dropped copy.
      const annotations = (m.annotations ??= {});
      const [key, value] = readMapEntry(r, r.lengthEnd());
      if (key !== LAST_APPLIED) annotations[key] = value;
      return;
    }
    case tag(13, BYTES):
      (m.ownerReferences ??= []).push(readOwnerReference(r, r.lengthEnd()));
      return;
    case tag(14, BYTES):
      (m.finalizers ??= []).push(r.string());
      return;
    default:
      // managedFields (17) among them: Pods are only read, so no ownership is kept.
      r.skip(t & 7);
  }
}

/** Sets a text field as JSON has it: left out when empty (`omitempty`), where protobuf sends "". */
function setText<K extends string>(into: Partial<Record<K, unknown>>, key: K, value: string): void {
  if (value) into[key] = value;
}

function readOwnerReference(r: ProtoReader, end: number): OwnerReference {
  const ref: OwnerReference = { apiVersion: '', kind: '', name: '', uid: '' };
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(1, BYTES)) ref.kind = r.string();
    else if (t === tag(3, BYTES)) ref.name = r.string();
    else if (t === tag(4, BYTES)) ref.uid = r.string();
    else if (t === tag(5, BYTES)) ref.apiVersion = r.string();
    else if (t === tag(6, VARINT)) ref.controller = r.bool();
    else if (t === tag(7, VARINT)) ref.blockOwnerDeletion = r.bool();
    else r.skip(t & 7);
  }
  return ref;
}

/** `spec.nodeName` (field 10); the rest of the spec is passed over. */
function readNodeName(r: ProtoReader, end: number): string | undefined {
  let nodeName: string | undefined;
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(10, BYTES)) nodeName = r.string() || undefined;
    else r.skip(t & 7);
  }
  return nodeName;
}

function readPodStatus(r: ProtoReader, end: number): NonNullable<Pod['status']> {
  const kept: NonNullable<Pod['status']> = { phase: undefined };
  let conditions: NonNullable<Pod['status']>['conditions'];
  let init: ContainerStatus[] | undefined;
  let containers: ContainerStatus[] | undefined;
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(1, BYTES)) kept.phase = r.string() || undefined;
    else if (t === tag(2, BYTES)) {
      const condition = readKeptCondition(r, r.lengthEnd());
      if (condition) (conditions ??= []).push(condition);
    } else if (t === tag(10, BYTES)) (init ??= []).push(readContainerStatus(r, r.lengthEnd()));
    else if (t === tag(8, BYTES)) (containers ??= []).push(readContainerStatus(r, r.lengthEnd()));
    else r.skip(t & 7);
  }
  if (conditions) kept.conditions = conditions;
  if (init) kept.initContainerStatuses = init;
  if (containers) kept.containerStatuses = containers;
  return kept;
}

/** A condition the cache keeps (Ready; PodScheduled=False), with its reason and message; others are undefined. */
function readKeptCondition(r: ProtoReader, end: number) {
  let type = '';
  let status = '';
  let reason = '';
  let message = '';
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(1, BYTES)) type = r.string();
    else if (t === tag(2, BYTES)) status = r.string();
    else if (t === tag(5, BYTES)) reason = r.string();
    else if (t === tag(6, BYTES)) message = r.string();
    else r.skip(t & 7);
  }
  if (type !== 'Ready' && !(type === 'PodScheduled' && status === 'False')) return undefined;
  return { type, status, ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

/** A container's name and state, and — while it waits — how it last ended (exit code and reason). */
function readContainerStatus(r: ProtoReader, end: number): ContainerStatus {
  let name = '';
  let state: WireContainerState = {};
  let lastTerminated: WireContainerState['terminated'];
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(1, BYTES)) name = r.string();
    else if (t === tag(2, BYTES)) state = readContainerState(r, r.lengthEnd());
    else if (t === tag(3, BYTES)) lastTerminated = readContainerState(r, r.lengthEnd()).terminated;
    else r.skip(t & 7);
  }
  const last = state.waiting ? lastTerminated : undefined;
  return {
    name,
    state,
    ...(last ? { lastState: { terminated: { exitCode: last.exitCode, reason: last.reason } } } : {}),
  };
}

function readContainerState(r: ProtoReader, end: number): WireContainerState {
  const state: WireContainerState = {};
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(1, BYTES)) state.waiting = readWaiting(r, r.lengthEnd());
    else if (t === tag(2, BYTES)) state.running = readRunning(r, r.lengthEnd());
    else if (t === tag(3, BYTES)) state.terminated = readTerminated(r, r.lengthEnd());
    else r.skip(t & 7);
  }
  return state;
}

function readWaiting(r: ProtoReader, end: number): NonNullable<ContainerState['waiting']> {
  const waiting: NonNullable<ContainerState['waiting']> = {};
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(1, BYTES)) setText(waiting, 'reason', r.string());
    else if (t === tag(2, BYTES)) setText(waiting, 'message', r.string());
    else r.skip(t & 7);
  }
  return waiting;
}

function readRunning(r: ProtoReader, end: number): NonNullable<WireContainerState['running']> {
  let startedAt: string | null = null;
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(1, BYTES)) startedAt = readTime(r, r.lengthEnd());
    else r.skip(t & 7);
  }
  return { startedAt };
}

function readTerminated(r: ProtoReader, end: number): NonNullable<WireContainerState['terminated']> {
  const terminated: NonNullable<WireContainerState['terminated']> = {
    exitCode: 0,
    startedAt: null,
    finishedAt: null,
  };
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(1, VARINT)) terminated.exitCode = r.int32();
    else if (t === tag(2, VARINT)) {
      const signal = r.int32();
      if (signal) terminated.signal = signal;
    } else if (t === tag(3, BYTES)) setText(terminated, 'reason', r.string());
    else if (t === tag(4, BYTES)) setText(terminated, 'message', r.string());
    else if (t === tag(5, BYTES)) terminated.startedAt = readTime(r, r.lengthEnd());
    else if (t === tag(6, BYTES)) terminated.finishedAt = readTime(r, r.lengthEnd());
    else if (t === tag(7, BYTES)) setText(terminated, 'containerID', r.string());
    else r.skip(t & 7);
  }
  return terminated;
}
