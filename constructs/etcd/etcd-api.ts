import * as http from 'node:http';
import * as https from 'node:https';
import { connect as connectTls } from 'node:tls';

/**
 * The few calls of etcd's v3 API the operator makes, through the JSON gateway every etcd serves
 * on its client port (`/v3/...`): no gRPC stack, no dependency. 64-bit member IDs travel as
 * decimal strings, as the gateway writes them, and are never turned into numbers.
 */

/** A member as `member list` shows it. A member added but not yet started has no name. */
export interface EtcdMember {
  readonly id: string;
  readonly name: string;
  readonly peerURLs: readonly string[];
  readonly clientURLs: readonly string[];
  readonly isLearner: boolean;
}

/** What one member says of itself (`/v3/maintenance/status`). */
export interface EtcdMemberStatus {
  readonly memberId: string;
  /** The leader's ID; '0' while there is none. */
  readonly leader: string;
  readonly version: string;
  readonly isLearner: boolean;
  readonly errors: readonly string[];
  /** The size of its database file, in bytes. */
  readonly dbSize: number;
  /** The part of it in use; the rest is free pages a defragmentation gives back. */
  readonly dbSizeInUse: number;
}

/** An answer etcd gave with an error (e.g. "can only promote a learner member which is in sync with leader"). */
export class EtcdApiError extends Error {
  constructor(
    readonly url: string,
    readonly status: number,
    message: string,
  ) {
    super(`${url}: ${message}`);
  }
}

const DEFAULT_TIMEOUT_MS = 2000;

/** A client certificate, and the CA the members' serving certificates are checked against (PEM). */
export interface EtcdClientTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** A member's client URL, with the client certificate an https URL needs (a plain URL alone for plaintext). */
export type EtcdEndpoint = string | { readonly url: string; readonly tls?: EtcdClientTls };

/** The URL of an endpoint, for messages. */
export function endpointURL(endpoint: EtcdEndpoint): string {
  return typeof endpoint === 'string' ? endpoint : endpoint.url;
}

/** POSTs a JSON body to one member's gateway; rejects on a transport error, a timeout or an error answer. */
export function etcdCall<T>(
  endpoint: EtcdEndpoint,
  path: string,
  body: object,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<T> {
  const url = new URL(path, endpointURL(endpoint));
  const tls = typeof endpoint === 'string' ? undefined : endpoint.tls;
  const payload = JSON.stringify(body);
  const options = {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    timeout: timeoutMs,
  };
  if (url.protocol === 'https:' && !tls) return Promise.reject(new Error(`${url.href}: no client certificate for TLS`));
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(
      url,
      // The member's certificate checked against the cluster's client CA, and ours presented.
      tls ? { ...options, ca: tls.ca, cert: tls.cert, key: tls.key, agent: false } : options,
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => {
          let json: EtcdAnswer;
          try {
            json = JSON.parse(text) as EtcdAnswer;
          } catch {
            reject(new EtcdApiError(url.href, res.statusCode ?? 0, `not JSON: ${text.slice(0, 200)}`));
            return;
          }
          if ((res.statusCode ?? 500) >= 300 || json.error || (json.code && json.message)) {
            reject(new EtcdApiError(url.href, res.statusCode ?? 0, json.message ?? json.error ?? text));
          } else {
            resolve(json as T);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url.href}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The envelope of every gRPC-gateway answer (an error carries `error` or `code` + `message`). */
interface EtcdAnswer {
  error?: string;
  code?: number;
  message?: string;
}

/** A member as the gateway's JSON gives it: 64-bit ids are strings there. */
interface MemberJson {
  ID?: string;
  name?: string;
  peerURLs?: string[];
  clientURLs?: string[];
  isLearner?: boolean;
}

interface StatusJson {
  header?: { member_id?: string };
  leader?: string;
  version?: string;
  isLearner?: boolean;
  errors?: string[];
  dbSize?: string;
  dbSizeInUse?: string;
}

function member(m: MemberJson): EtcdMember {
  return {
    id: m.ID ?? '',
    name: m.name ?? '',
    peerURLs: m.peerURLs ?? [],
    clientURLs: m.clientURLs ?? [],
    isLearner: m.isLearner === true,
  };
}

/** The member list, as agreed by a quorum (linearizable): a member cut off from the others fails it. */
export async function listMembers(clientURL: EtcdEndpoint): Promise<EtcdMember[]> {
  const r = await etcdCall<{ members?: MemberJson[] }>(clientURL, '/v3/cluster/member/list', { linearizable: true });
  return (r.members ?? []).map(member);
}

export async function addMember(clientURL: EtcdEndpoint, peerURL: string, asLearner: boolean): Promise<EtcdMember> {
  const r = await etcdCall<{ member: MemberJson }>(clientURL, '/v3/cluster/member/add', {
    peerURLs: [peerURL],
    isLearner: asLearner,
  });
  return member(r.member);
}

export async function removeMember(clientURL: EtcdEndpoint, id: string): Promise<void> {
  await etcdCall(clientURL, '/v3/cluster/member/remove', { ID: id });
}

export async function promoteMember(clientURL: EtcdEndpoint, id: string): Promise<void> {
  await etcdCall(clientURL, '/v3/cluster/member/promote', { ID: id });
}

/** Moves leadership to `targetId`; must be sent to the current leader. */
export async function transferLeadership(leaderClientURL: EtcdEndpoint, targetId: string): Promise<void> {
  await etcdCall(leaderClientURL, '/v3/maintenance/transfer-leadership', { targetID: targetId }, 10_000);
}

export async function memberStatus(clientURL: EtcdEndpoint, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<EtcdMemberStatus> {
  const r = await etcdCall<StatusJson>(clientURL, '/v3/maintenance/status', {}, timeoutMs);
  return {
    memberId: r.header?.member_id ?? '',
    leader: r.leader ?? '0',
    version: r.version ?? '',
    isLearner: r.isLearner === true,
    errors: r.errors ?? [],
    dbSize: Number(r.dbSize ?? 0),
    dbSizeInUse: Number(r.dbSizeInUse ?? r.dbSize ?? 0),
  };
}

/** Defragments one member's database (it answers nothing else meanwhile); must be sent to that member. */
export async function defragment(clientURL: EtcdEndpoint): Promise<void> {
  await etcdCall(clientURL, '/v3/maintenance/defragment', {}, 120_000);
}

/** The first answer of `call` over `urls`, in order; undefined when none answers. */
export async function firstAnswer<E, T>(urls: readonly E[], call: (url: E) => Promise<T>): Promise<T | undefined> {
  for (const url of urls) {
    try {
      return await call(url);
    } catch {
      // Down, a learner, or cut off from the quorum: ask the next.
    }
  }
  return undefined;
}

/**
 * The certificate a member serves on its client port (DER), from a TLS handshake presenting the
 * operator's certificate: which CA it is of says whether the kubelet has given the member its
 * renewed Secret yet. The member is not checked here (its CA may be the one being replaced).
 */
export function servedCertificate(endpoint: EtcdEndpoint, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<Buffer> {
  const url = new URL(endpointURL(endpoint));
  const tls = typeof endpoint === 'string' ? undefined : endpoint.tls;
  if (url.protocol !== 'https:' || !tls) return Promise.reject(new Error(`${url.href}: not a TLS endpoint`));
  return new Promise((resolve, reject) => {
    const socket = connectTls({
      host: url.hostname,
      port: Number(url.port),
      cert: tls.cert,
      key: tls.key,
      rejectUnauthorized: false,
      timeout: timeoutMs,
    });
    socket.once('secureConnect', () => {
      const raw = socket.getPeerCertificate().raw;
      socket.end();
      resolve(raw);
    });
    socket.once('timeout', () => socket.destroy(new Error(`${url.href}: no handshake in ${timeoutMs} ms`)));
    socket.once('error', reject);
  });
}
