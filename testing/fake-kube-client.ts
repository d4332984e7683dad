import type { KubeObject, ResourceType } from '../constructs/contract';
import { isJsonObject } from '../constructs/contract/json';
import {
  ApiError,
  type JsonPatchOperation,
  type KubeClient,
  type KubeList,
  type MergePatchOptions,
  type WatchEvent,
  type WatchOptions,
  extractApplied,
  type FieldSet,
  apiVersionOf,
} from '../operator/runtime/client';

/**
 * A write's verb. Named, so the docs print this name: typedoc prints an inline union of string
 * literals in the order the compiler first met them, which changes with the order files load.
 */
export type FakeWriteVerb = 'create' | 'apply' | 'update' | 'patch' | 'delete';

/** One write the fake answered, in order. */
export interface FakeWrite {
  readonly verb: FakeWriteVerb;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly subresource?: string;
  /** A delete's, when it asked for one (`Orphan` keeps what the object owns). */
  readonly propagationPolicy?: string;
}

interface Stored {
  readonly type: ResourceType;
  object: KubeObject;
}

interface Watcher {
  readonly type: ResourceType;
  readonly namespace?: string;
  readonly onEvent: (e: WatchEvent) => void;
}

/**
 * An in-memory API server for unit tests of a controller: `runOperator`'s pieces (`Manager`,
 * `buildController`) run against it as against a real one, without a cluster. It keeps objects
 * by type, namespace and name; answers get, list (label and field selectors of `a=b` terms),
 * watch, create, server-side apply, merge patch and delete (with uid preconditions) as the API
 * server would; assigns uid, resourceVersion, generation and creationTimestamp; and records
 * every write in `writes`, so a test can say "a resync writes nothing".
 *
 * What it does not do: defaults, validation, admission, garbage collection, and the fine points
 * of server-side apply (every list is atomic; there is one field manager's view). For those, run
 * the controller against `startControlPlane()`.
 */
export class FakeKubeClient implements KubeClient {
  readonly fieldManager: string;
  /** Every write answered, in order. */
  readonly writes: FakeWrite[] = [];
  private readonly objects = new Map<string, Stored>();
  private readonly watchers = new Set<Watcher>();
  private revision = 0;
  private uids = 0;

  constructor(options: { readonly fieldManager?: string } = {}) {
    this.fieldManager = options.fieldManager ?? 'cdk8s-operator-kit';
  }

  /** Stores objects as if someone else had created them: no write is recorded. */
  seed(type: ResourceType, ...objects: KubeObject[]): void {
    for (const o of objects) this.store(type, this.stamp(type, structuredClone(o), undefined));
  }

  /** The stored object, or undefined: for assertions. */
  peek<T extends KubeObject>(type: ResourceType<T>, name: string, namespace?: string): T | undefined {
    const stored = this.objects.get(keyOf(type, namespace, name));
    return stored && objectOf(type, stored.object);
  }

  /** Every stored object of a type (in one namespace, or all), or none: for assertions. */
  peekAll<T extends KubeObject>(type: ResourceType<T>, namespace?: string): T[] {
    return [...this.objects.values()]
      .filter((s) => sameType(s.type, type) && (namespace === undefined || s.object.metadata.namespace === namespace))
      .map((s) => objectOf(type, s.object));
  }

  get<T extends KubeObject>(type: ResourceType<T>, name: string, namespace?: string): Promise<T> {
    const found = this.peek(type, name, namespace);
    return found ? later(() => structuredClone(found)) : failLater(notFound(type, name));
  }

  list<T extends KubeObject>(
    type: ResourceType<T>,
    namespace?: string,
    query: Record<string, string> = {},
  ): Promise<KubeList<T>> {
    const items = [...this.objects.values()]
      .filter((s) => sameType(s.type, type) && (namespace === undefined || s.object.metadata.namespace === namespace))
      .map((s) => s.object)
      .filter((o) => selects(query, o))
      .map((o) => objectOf(type, structuredClone(o)));
    return later(() => ({ metadata: { resourceVersion: String(this.revision) }, items }));
  }

  create<T extends KubeObject>(type: ResourceType<T>, obj: KubeObject, namespace?: string): Promise<T> {
    const ns = namespace ?? obj.metadata.namespace;
    const name = obj.metadata.name ?? '';
    if (this.objects.has(keyOf(type, ns, name))) return failLater(conflict(type, name, 'AlreadyExists'));
    const created = this.stamp(
      type,
      structuredClone({ ...obj, metadata: { ...obj.metadata, namespace: ns } }),
      undefined,
    );
    this.record({ verb: 'create', kind: type.kind, name, namespace: ns });
    const stored = objectOf(type, structuredClone(this.store(type, created)));
    return later(() => stored);
  }

  apply<T extends KubeObject>(
    type: ResourceType<T>,
    obj: KubeObject,
    options: { subresource?: string; force?: boolean; dryRun?: boolean } = {},
  ): Promise<T> {
    const { name = '', namespace, uid } = obj.metadata;
    const current = this.peek(type, name, namespace);
    // A uid in the applied object is a precondition, as on the API server.
    if (uid !== undefined && current?.metadata.uid !== uid) {
      return failLater(current ? invalid(type, name, 'metadata.uid: field is immutable') : conflict(type, name));
    }
    if (options.subresource === 'status') {
      if (!current) return failLater(notFound(type, name));
      this.record({ verb: 'apply', kind: type.kind, name, namespace, subresource: 'status' });
      const next = this.stamp(type, { ...structuredClone(current), status: structuredClone(obj.status) }, current);
      const stored = objectOf(type, structuredClone(this.store(type, next)));
      return later(() => stored);
    }
    const { uid: _uid, ...meta } = obj.metadata;
    const desired = structuredClone({ ...obj, metadata: meta });
    const base = current ? withoutOwnedBy(current, this.fieldManager) : undefined;
    const merged = kubeObject(merge(base ?? {}, desired));
    merged.metadata.managedFields = [
      {
        manager: this.fieldManager,
        operation: 'Apply',
        apiVersion: apiVersionOf(type),
        fieldsType: 'FieldsV1',
        fieldsV1: fieldSetOf(desired),
      },
    ];
    // A dry run: what would be stored, neither stored nor recorded as a write.
    if (options.dryRun) return later(() => objectOf(type, structuredClone(merged)));
    this.record({ verb: 'apply', kind: type.kind, name, namespace });
    const stored = objectOf(type, structuredClone(this.store(type, this.stamp(type, merged, current))));
    return later(() => stored);
  }

  mergePatch<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    options: MergePatchOptions = {},
  ): Promise<T> {
    const current = this.peek(type, name, namespace);
    if (!current) return failLater(notFound(type, name));
    // A resourceVersion in the patch is a precondition, as on the API server.
    const expected = isObject(patch) && isObject(patch.metadata) ? patch.metadata.resourceVersion : undefined;
    if (typeof expected === 'string' && expected !== current.metadata.resourceVersion)
      return failLater(conflict(type, name));
    // A dry run: the object as patched, neither stored nor recorded as a write.
    if (options.dryRun) return later(() => objectOf(type, kubeObject(mergePatch(structuredClone(current), patch))));
    this.record({ verb: 'patch', kind: type.kind, name, namespace, subresource: options.subresource });
    const next = this.stamp(type, kubeObject(mergePatch(structuredClone(current), patch)), current);
    const stored = objectOf(type, structuredClone(this.store(type, next)));
    return later(() => stored);
  }

  delete(
    type: ResourceType,
    name: string,
    namespace?: string,
    options: { uid?: string; propagationPolicy?: 'Background' | 'Foreground' | 'Orphan' } = {},
  ): Promise<void> {
    const key = keyOf(type, namespace, name);
    const current = this.objects.get(key)?.object;
    if (!current) return failLater(notFound(type, name));
    if (options.uid !== undefined && options.uid !== current.metadata.uid) return failLater(conflict(type, name));
    this.objects.delete(key);
    const { propagationPolicy } = options;
    this.record({
      verb: 'delete',
      kind: type.kind,
      name,
      namespace,
      ...(propagationPolicy ? { propagationPolicy } : {}),
    });
    this.revision++;
    this.notify(type, { type: 'DELETED', object: structuredClone(current) });
    return later(() => undefined);
  }

  update<T extends KubeObject>(type: ResourceType<T>, obj: T): Promise<T> {
    const { name = '', namespace, resourceVersion } = obj.metadata;
    const current = this.peek(type, name, namespace);
    if (!current) return failLater(notFound(type, name));
    // Optimistic concurrency, as on the API server: a replacement of an older version is refused.
    if (resourceVersion !== undefined && resourceVersion !== current.metadata.resourceVersion)
      return failLater(conflict(type, name));
    this.record({ verb: 'update', kind: type.kind, name, namespace });
    const stored = objectOf(type, structuredClone(this.store(type, this.stamp(type, structuredClone(obj), current))));
    return later(() => stored);
  }

  jsonPatch<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    namespace: string | undefined,
    operations: readonly JsonPatchOperation[],
  ): Promise<T> {
    const current = this.peek(type, name, namespace);
    if (!current) return failLater(notFound(type, name));
    const patched: unknown = structuredClone(current);
    for (const operation of operations) {
      const problem = applyOperation(patched, operation);
      if (problem) return failLater(problem === 'test failed' ? conflict(type, name) : invalid(type, name, problem));
    }
    this.record({ verb: 'patch', kind: type.kind, name, namespace });
    const stored = objectOf(type, structuredClone(this.store(type, this.stamp(type, kubeObject(patched), current))));
    return later(() => stored);
  }

  watch(type: ResourceType, { namespace, onEvent, signal, onOpen }: WatchOptions): Promise<void> {
    const watcher: Watcher = { type, namespace, onEvent };
    this.watchers.add(watcher);
    onOpen?.();
    return new Promise((resolve) => {
      const stop = () => {
        this.watchers.delete(watcher);
        resolve();
      };
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
  }

  close(): void {
    this.watchers.clear();
  }

  /** Metadata the API server assigns: uid and creation time once, a new resourceVersion, generation on spec changes. */
  private stamp(type: ResourceType, obj: KubeObject, current: KubeObject | undefined): KubeObject {
    this.revision++;
    const specChanged = !current || JSON.stringify(specOf(current)) !== JSON.stringify(specOf(obj));
    const generation = (current?.metadata.generation ?? 0) + (specChanged ? 1 : 0);
    obj.apiVersion ??= apiVersionOf(type);
    obj.kind ??= type.kind;
    obj.metadata = {
      ...obj.metadata,
      uid: current?.metadata.uid ?? obj.metadata.uid ?? `fake-uid-${++this.uids}`,
      creationTimestamp: current?.metadata.creationTimestamp ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      resourceVersion: String(this.revision),
      generation,
    };
    return obj;
  }

  private store(type: ResourceType, obj: KubeObject): KubeObject {
    const key = keyOf(type, obj.metadata.namespace, obj.metadata.name ?? '');
    const existed = this.objects.has(key);
    this.objects.set(key, { type, object: obj });
    this.notify(type, { type: existed ? 'MODIFIED' : 'ADDED', object: structuredClone(obj) });
    return obj;
  }

  /** Watch events arrive later, as from a server: never inside the write that caused them. */
  private notify(type: ResourceType, event: WatchEvent & { object: KubeObject }): void {
    for (const w of this.watchers) {
      if (sameType(w.type, type) && (w.namespace === undefined || w.namespace === event.object.metadata.namespace))
        setImmediate(() => {
          if (this.watchers.has(w)) w.onEvent(event);
        });
    }
  }

  private record(write: FakeWrite): void {
    this.writes.push(write);
  }
}

/**
 * An answer on a later turn of the event loop, as over a network: a controller that loops
 * against the fake then loops as it would against a server, and timers still fire.
 */
function later<T>(value: () => T): Promise<T> {
  return new Promise((resolve) => {
    setImmediate(() => {
      resolve(value());
    });
  });
}

function failLater(error: Error): Promise<never> {
  return new Promise((_resolve, reject) => {
    setImmediate(() => {
      reject(error);
    });
  });
}

function keyOf(type: ResourceType, namespace: string | undefined, name: string): string {
  return `${type.group}/${type.resource}/${type.namespaced ? (namespace ?? '') : ''}/${name}`;
}

function sameType(a: ResourceType, b: ResourceType): boolean {
  return a.group === b.group && a.resource === b.resource;
}

/** Everything but metadata and status: what moves `metadata.generation`. */
function specOf(obj: KubeObject): unknown {
  const { metadata: _m, status: _s, ...rest } = obj;
  return rest;
}

/** `labelSelector` and `fieldSelector` of `a=b` terms (and `a!=b` for fields), as the informers send them. */
function selects(query: Record<string, string>, obj: KubeObject): boolean {
  const labels = obj.metadata.labels ?? {};
  for (const term of (query.labelSelector ?? '').split(',').filter(Boolean)) {
    const [k = '', v] = term.split('=');
    if (labels[k] !== v) return false;
  }
  for (const term of (query.fieldSelector ?? '').split(',').filter(Boolean)) {
    const negated = term.includes('!=');
    const [path = '', v] = term.split(negated ? '!=' : '=');
    const actual = path.split('.').reduce<unknown>((o, p) => (isObject(o) ? o[p] : undefined), obj);
    if ((String(actual) === v) === negated) return false;
  }
  return true;
}

const isObject = isJsonObject;

/**
 * One JSON patch operation applied in place (RFC 6902's add, replace, remove and test, through
 * objects and arrays; `-` appends to an array): what went wrong, `'test failed'`, or undefined.
 * Paths are JSON pointers (`/metadata/annotations/a~1b`, `/webhooks/0/clientConfig`).
 */
function applyOperation(doc: unknown, { op, path, value }: JsonPatchOperation): string | undefined {
  const steps = path
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = steps.pop();
  let parent: unknown = doc;
  for (const step of steps)
    parent = Array.isArray(parent) ? parent[Number(step)] : isObject(parent) ? parent[step] : undefined;
  if (last === undefined) return `${path}: no such path`;
  if (Array.isArray(parent)) return applyToArray(parent, last, { op, path, value });
  if (!isObject(parent)) return `${path}: no such path`;
  if (op === 'test') return JSON.stringify(parent[last]) === JSON.stringify(value) ? undefined : 'test failed';
  if ((op === 'remove' || op === 'replace') && !(last in parent)) return `${path}: no such field to ${op}`;
  if (op === 'remove') Reflect.deleteProperty(parent, last);
  else parent[last] = structuredClone(value);
  return undefined;
}

/** An operation on an item of an array: by index, or at its end (`-`, for add). */
function applyToArray(items: unknown[], last: string, { op, path, value }: JsonPatchOperation): string | undefined {
  const index = last === '-' && op === 'add' ? items.length : Number(last);
  const bound = op === 'add' ? items.length : items.length - 1;
  if (!Number.isInteger(index) || index < 0 || index > bound) return `${path}: no such item`;
  if (op === 'test') return JSON.stringify(items[index]) === JSON.stringify(value) ? undefined : 'test failed';
  if (op === 'add') items.splice(index, 0, structuredClone(value));
  else if (op === 'remove') items.splice(index, 1);
  else items[index] = structuredClone(value);
  return undefined;
}

/** A merged or patched value as an object: it keeps the metadata it was made from. */
function kubeObject(v: unknown): KubeObject {
  if (isObject(v) && isObject(v.metadata)) return { ...v, metadata: v.metadata };
  throw new Error(`FakeKubeClient: not an object with metadata: ${JSON.stringify(v)}`);
}

/**
 * An object stored under `type` as that type's objects: the store keeps each type's objects
 * under its key, as the API server's storage does, so the type names what it holds.
 */
function objectOf<T extends KubeObject>(_type: ResourceType<T>, object: KubeObject): T {
  return object as T;
}

/** `patch` over `base`: objects merged key by key, everything else (lists too) replaced. */
function merge(base: unknown, patch: unknown): unknown {
  if (!isObject(base) || !isObject(patch)) return patch;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) out[k] = merge(base[k], v);
  return out;
}

/** RFC 7386: null removes a key. */
function mergePatch(base: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out = new Map(Object.entries(isObject(base) ? base : {}));
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) out.delete(k);
    else out.set(k, mergePatch(out.get(k), v));
  }
  return Object.fromEntries(out);
}

/** The object without the fields `manager` applied last time: applying again then drops what it no longer sends. */
function withoutOwnedBy(obj: KubeObject, manager: string): KubeObject {
  const owned = extractApplied(obj, manager);
  return owned ? kubeObject(remove(structuredClone(obj), owned)) : structuredClone(obj);
}

/** `target` without the leaves of `owned`; objects left empty by that go too. */
function remove(target: unknown, owned: unknown): unknown {
  if (!isObject(target) || !isObject(owned)) return undefined;
  const out = new Map(Object.entries(target));
  for (const [k, v] of Object.entries(owned)) {
    const left = remove(out.get(k), v);
    if (left === undefined || (isObject(left) && Object.keys(left).length === 0 && isObject(v))) out.delete(k);
    else out.set(k, left);
  }
  return Object.fromEntries(out);
}

/** The fields of an applied object as server-side apply records them, every list atomic. */
function fieldSetOf(value: unknown): FieldSet {
  const set: FieldSet = {};
  if (!isObject(value)) return set;
  for (const [k, v] of Object.entries(value)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    if (isObject(v) && k === 'metadata') {
      const { name: _n, namespace: _ns, managedFields: _mf, ...meta } = v;
      set['f:metadata'] = fieldSetOf(meta);
    } else set[`f:${k}`] = isObject(v) ? fieldSetOf(v) : {};
  }
  return set;
}

function notFound(type: ResourceType, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${type.resource} "${name}" not found`);
}

function conflict(type: ResourceType, name: string, reason = 'Conflict'): ApiError {
  return new ApiError(409, reason, `${type.resource} "${name}": ${reason}`);
}

function invalid(type: ResourceType, name: string, message: string): ApiError {
  return new ApiError(422, 'Invalid', `${type.resource} "${name}" is invalid: ${message}`);
}
