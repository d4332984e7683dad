/**
 * Reading a kind's resources as a new version of its code would reconcile them, before that
 * version is in the cluster: at a version the cluster serves now, converted by the new code's
 * own conversion (the hub and spokes the controllers module declares), with the new storage
 * version's defaults. No conversion webhook is needed — the read names a version objects are
 * stored in, so the API server converts nothing — and nothing is written.
 */
import type { ControllerDeclaration } from '../constructs/core/controller-declaration';
import { withSchemaDefaults } from '../constructs/core/defaults';
import {
  BuiltinTypes,
  type CustomResourceObject,
  customResourceType,
  type KubeObject,
  type ResourceType,
} from '../constructs/contract';
import { isJsonObject } from '../constructs/contract/json';
import { ApiError, isNotFound, type KubeClient } from '../operator/runtime/client';
import { NotInstalledError, RenderError } from './errors';

/** The parts of a live CustomResourceDefinition a preview reads. */
export interface LiveCrd extends KubeObject {
  readonly spec: {
    readonly versions: readonly {
      readonly name: string;
      readonly served: boolean;
      readonly storage: boolean;
      readonly schema?: { readonly openAPIV3Schema?: unknown };
    }[];
    readonly conversion?: { readonly strategy?: string };
  };
  readonly status?: { readonly storedVersions?: readonly string[] };
}

/** The kind's CRD as the cluster has it, or undefined when it is not installed. */
export async function liveCrd(client: KubeClient, decl: ControllerDeclaration): Promise<LiveCrd | undefined> {
  let crd: KubeObject;
  try {
    crd = await client.get(BuiltinTypes.CustomResourceDefinition, decl.for.crdName);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  if (!isLiveCrd(crd)) throw new RenderError(`CRD ${decl.for.crdName}: the API server answered without spec.versions`);
  return crd;
}

/**
 * The cluster a command previews against, with each kind's CRD read once for the whole run:
 * what the CRD change report and every read of a resource (which version to read at) share.
 */
export class ClusterCrds {
  private readonly crds = new Map<string, Promise<LiveCrd | undefined>>();

  constructor(readonly client: KubeClient) {}

  /** The kind's CRD, or undefined when it is not installed. */
  of(decl: ControllerDeclaration): Promise<LiveCrd | undefined> {
    let crd = this.crds.get(decl.for.crdName);
    if (!crd) {
      crd = liveCrd(this.client, decl);
      this.crds.set(decl.for.crdName, crd);
    }
    return crd;
  }
}

function isLiveCrd(o: KubeObject): o is LiveCrd {
  const spec: unknown = o.spec;
  return isJsonObject(spec) && Array.isArray(spec.versions);
}

/**
 * The versions to read at, best first: those objects are stored in (one of them alone needs no
 * conversion at all), the cluster's storage version first; each served by the cluster and known
 * to the new code (whose conversion takes the objects from there).
 */
export function readVersions(crd: LiveCrd, decl: ControllerDeclaration): string[] {
  const served = crd.spec.versions.filter((v) => v.served).map((v) => v.name);
  const storage = crd.spec.versions.find((v) => v.storage)?.name;
  const stored = crd.status?.storedVersions ?? (storage ? [storage] : []);
  const order = [...stored.filter((v) => v === storage), ...stored, ...served];
  return [...new Set(order)].filter((v) => served.includes(v) && decl.for.versions.includes(v));
}

/**
 * What a kind's resources read as, in the new code's storage version: `read` is the version
 * the cluster gave them in.
 */
export interface ServedResources {
  readonly resources: CustomResourceObject[];
  readonly read: string;
}

/** Every resource of the kind (in one namespace, or all), as the new code would reconcile it. */
export async function listAsNewCode(
  cluster: ClusterCrds,
  decl: ControllerDeclaration,
  namespace: string | undefined,
): Promise<ServedResources> {
  return atServedVersion(cluster, decl, async (type) => {
    const items = (await cluster.client.list<CustomResourceObject>(type, decl.for.namespaced ? namespace : undefined))
      .items;
    return withTypeMeta(type, items);
  });
}

/** One resource, as the new code would reconcile it. */
export async function getAsNewCode(
  cluster: ClusterCrds,
  decl: ControllerDeclaration,
  name: string,
  namespace: string | undefined,
): Promise<CustomResourceObject> {
  const { resources } = await atServedVersion(cluster, decl, async (type) => [
    await cluster.client.get<CustomResourceObject>(type, name, decl.for.namespaced ? namespace : undefined),
  ]);
  const [resource] = resources;
  if (!resource) throw new RenderError(`${decl.for.kind} ${name}: not found`);
  return resource;
}

/**
 * Reads at the first version that answers (a version objects are stored in needs no conversion
 * webhook; another may, and fail while no operator serves it), then converts with the new code.
 */
async function atServedVersion(
  cluster: ClusterCrds,
  decl: ControllerDeclaration,
  read: (type: ResourceType<CustomResourceObject>) => Promise<CustomResourceObject[]>,
): Promise<ServedResources> {
  const crd = await cluster.of(decl);
  if (!crd) throw new NotInstalledError(`CRD ${decl.for.crdName} is not installed: there is nothing of it to preview`);
  const versions = readVersions(crd, decl);
  if (versions.length === 0)
    throw new RenderError(
      `CRD ${decl.for.crdName}: the cluster serves ${crd.spec.versions.map((v) => v.name).join(', ')}, and the new code knows none of them (${decl.for.versions.join(', ')}): it cannot convert what is stored`,
    );
  const failures: string[] = [];
  for (const version of versions) {
    try {
      const objects = await read(customResourceType(decl.for, version));
      return { resources: objects.map((o) => asNewCode(decl, o)), read: version };
    } catch (err) {
      if (!(err instanceof ApiError) || isNotFound(err)) throw err;
      failures.push(`as ${version}: ${err.message}`);
    }
  }
  throw new RenderError(
    `CRD ${decl.for.crdName}: no served version could be read without the cluster's conversion (objects are stored in ${(crd.status?.storedVersions ?? []).join(', ')}; run the operator that serves it, or let its storage migration finish): ${failures.join('; ')}`,
  );
}

/** A list's items, which leave out their apiVersion and kind (an object read alone has them), with them. */
export function withTypeMeta<T extends KubeObject>(type: ResourceType<T>, items: readonly T[]): T[] {
  const apiVersion = type.group ? `${type.group}/${type.version}` : type.version;
  return items.map((o) => ({ ...o, apiVersion, kind: type.kind }));
}

/** A resource read at a served version, converted and defaulted as the new code's storage version. */
export function asNewCode(decl: ControllerDeclaration, object: CustomResourceObject): CustomResourceObject {
  const converted = decl.for.convert(object, decl.for.apiVersion);
  return { ...converted, spec: withSchemaDefaults(decl.for.specSchema(), converted.spec) };
}
