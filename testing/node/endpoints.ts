/**
 * Where a Service's traffic goes on a real node, read from its objects: the egress proxy uses it
 * to take the API server's calls to a webhook Service to the pod serving it (never to the cluster
 * IP, which leads off this machine unless kube-proxy has a rule for it).
 */
import { isJsonObject } from '../../constructs/contract/json';

/** An IPv4 network, e.g. 10.250.0.0/24. */
export interface Cidr {
  readonly base: number;
  readonly mask: number;
}

function ipv4(ip: string): number | undefined {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + p, 0);
}

/** `10.250.0.0/24` → its network; undefined for anything else (IPv6 included). */
export function parseCidr(text: string): Cidr | undefined {
  const [ip = '', bits = ''] = text.split('/');
  const base = ipv4(ip);
  const n = Number(bits);
  if (base === undefined || bits === '' || !Number.isInteger(n) || n < 0 || n > 32) return undefined;
  const mask = n === 0 ? 0 : (0xffffffff << (32 - n)) >>> 0;
  return { base: (base & mask) >>> 0, mask };
}

export function inCidr(ip: string, cidr: Cidr): boolean {
  const n = ipv4(ip);
  return n !== undefined && (n & cidr.mask) >>> 0 === cidr.base;
}

function array(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** The name of the Service's port `port` ('' when it has one unnamed port), or undefined when it has none. */
export function servicePortName(service: unknown, port: number): string | undefined {
  const spec = isJsonObject(service) && isJsonObject(service.spec) ? service.spec : {};
  const found = array(spec.ports).find((p) => isJsonObject(p) && p.port === port);
  if (!isJsonObject(found)) return undefined;
  return typeof found.name === 'string' ? found.name : '';
}

/** The target port an EndpointSlice gives for the Service port named `portName`. */
function slicePort(slice: Record<string, unknown>, portName: string): number | undefined {
  const found = array(slice.ports).find((p) => isJsonObject(p) && (p.name ?? '') === portName);
  return isJsonObject(found) && typeof found.port === 'number' ? found.port : undefined;
}

/** The first address of a ready endpoint of a slice. */
function readyAddress(slice: Record<string, unknown>): string | undefined {
  for (const e of array(slice.endpoints)) {
    if (!isJsonObject(e)) continue;
    const ready = !isJsonObject(e.conditions) || e.conditions.ready !== false;
    const address = array(e.addresses).find((a): a is string => typeof a === 'string');
    if (ready && address) return address;
  }
  return undefined;
}

/** `<address>:<targetPort>` of a ready endpoint of the Service's port named `portName`, from an EndpointSliceList. */
export function readyEndpoint(slices: unknown, portName: string): string | undefined {
  for (const slice of array(isJsonObject(slices) ? slices.items : undefined)) {
    if (!isJsonObject(slice)) continue;
    const port = slicePort(slice, portName);
    const address = readyAddress(slice);
    if (port !== undefined && address) return `${address}:${String(port)}`;
  }
  return undefined;
}
