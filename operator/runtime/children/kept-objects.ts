/**
 * The objects of a declaration's `keeps` types, read by name for a resource: handed over only when
 * the resource controls them (`getOwn`), or when another controller made them for one the resource
 * controls (`getMadeFor`) — so a kind never reads or changes what it did not make. Used by the
 * reconcile's steps and by the previews of `plan` and `diff`.
 */
import type { KubeObject, MadeFor, OwnLookup, ResourceType } from '../../../constructs/contract';
import { controllerOf, isNotFound, type KubeClient } from '../client';

/** Whose `keeps` objects a step may read and replace: the resource's, in its namespace. */
export interface KeptBy {
  readonly uid: string;
  readonly namespace: string | undefined;
  /** The declaration's `keeps` types. */
  readonly keeps: readonly ResourceType[];
}

/** Reads an object of a `keeps` type by name, handing its content over only when `keptBy` controls it. */
export async function getOwn<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  name: string,
  keptBy: KeptBy | undefined,
): Promise<OwnLookup<T>> {
  const by = keptType(type, keptBy);
  const object = await getAny(client, type, name, by.namespace);
  if (!object) return { state: 'absent' };
  return controlledBy(object, by.uid) ? { state: 'own', object } : { state: 'foreign' };
}

/**
 * Reads an object of a `keeps` type that another controller made for `madeFor`, one of `keptBy`'s
 * own objects: handed over only while `madeFor` is its own and the object names it (see
 * `PrepareApi.getMadeFor`).
 */
export async function getMadeFor<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  name: string,
  madeFor: MadeFor,
  keptBy: KeptBy | undefined,
): Promise<OwnLookup<T>> {
  const by = keptType(type, keptBy);
  const source = await getOwn(client, madeFor.type, madeFor.name, keptBy);
  if (source.state !== 'own') return source;
  const found = await getAny(client, type, name, by.namespace);
  if (!found) return { state: 'absent' };
  const owner = controllerOf(found);
  const names = found.metadata.annotations?.[madeFor.annotation] === madeFor.name;
  return names && (!owner || owner.uid === source.object.metadata.uid)
    ? { state: 'own', object: found }
    : { state: 'foreign' };
}

async function getAny<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  name: string,
  namespace: string | undefined,
): Promise<T | undefined> {
  try {
    return await client.get(type, name, namespace);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export function keptType(type: ResourceType, keptBy: KeptBy | undefined): KeptBy {
  if (!keptBy?.keeps.some((k) => k.group === type.group && k.kind === type.kind))
    throw new Error(`${type.kind} is not among the declaration's keeps: neither read nor replaced`);
  return keptBy;
}

export function controlledBy(object: KubeObject, uid: string): boolean {
  return uid !== '' && controllerOf(object)?.uid === uid;
}
