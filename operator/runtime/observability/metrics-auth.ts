import { createHash } from 'node:crypto';
import type { KubeObject, ResourceType } from '../../../constructs/contract';
import type { KubeClient } from '../client';

/** What a request for a protected path gets: 200 allowed, 401 no or bad token, 403 not allowed. */
export type AuthDecision = { status: 200 } | { status: 401 | 403; reason: string };

interface TokenReview extends KubeObject {
  spec?: { token: string };
  status?: {
    authenticated?: boolean;
    error?: string;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  };
}
interface SubjectAccessReview extends KubeObject {
  status?: { allowed?: boolean; reason?: string };
}

/** The reviews are made (POST) and answered at once; nothing is stored. */
const TOKEN_REVIEWS: ResourceType<TokenReview> = {
  group: 'authentication.k8s.io',
  version: 'v1',
  kind: 'TokenReview',
  resource: 'tokenreviews',
  namespaced: false,
};
const SUBJECT_ACCESS_REVIEWS: ResourceType<SubjectAccessReview> = {
  group: 'authorization.k8s.io',
  version: 'v1',
  kind: 'SubjectAccessReview',
  resource: 'subjectaccessreviews',
  namespaced: false,
};

export interface MetricsAuthorizerOptions {
  /** How long an answer is reused for the same token and path. @default 60000 */
  readonly cacheTtlMs?: number;
  /** Longest the cache grows (tokens), so a flood of bad tokens cannot fill memory. @default 256 */
  readonly maxEntries?: number;
}

/**
 * Authenticates and authorizes scrapes of `/metrics` through the API server, as
 * controller-runtime's `WithAuthenticationAndAuthorization` filter does: the bearer token is
 * checked with a TokenReview, and the user it names must be allowed `get` on the non-resource
 * URL (a SubjectAccessReview), which the `<operator>-metrics-reader` ClusterRole grants.
 * Answers are cached briefly per token, so a Prometheus scraping every 15 s costs the API server
 * two reviews a minute, not eight.
 */
export class MetricsAuthorizer {
  private readonly cache = new Map<string, { decision: AuthDecision; expires: number }>();

  constructor(
    private readonly client: KubeClient,
    private readonly options: MetricsAuthorizerOptions = {},
  ) {}

  async authorize(authorization: string | undefined, path: string): Promise<AuthDecision> {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    if (!token) return { status: 401, reason: 'a bearer token is required' };
    const key = `${createHash('sha256').update(token).digest('hex')} ${path}`;
    const cached = this.cache.get(key);
    if (cached && cached.expires > Date.now()) return cached.decision;
    const decision = await this.review(token, path);
    const oldest = this.cache.keys().next();
    if (this.cache.size >= (this.options.maxEntries ?? 256) && !oldest.done) this.cache.delete(oldest.value);
    this.cache.set(key, { decision, expires: Date.now() + (this.options.cacheTtlMs ?? 60_000) });
    return decision;
  }

  private async review(token: string, path: string): Promise<AuthDecision> {
    const tr = await this.client.create(TOKEN_REVIEWS, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      metadata: {},
      spec: { token },
    });
    const user = tr.status?.user;
    if (!tr.status?.authenticated || !user?.username) return { status: 401, reason: 'the token is not valid' };
    const sar = await this.client.create(SUBJECT_ACCESS_REVIEWS, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      metadata: {},
      spec: {
        user: user.username,
        uid: user.uid,
        groups: user.groups,
        extra: user.extra,
        nonResourceAttributes: { path, verb: 'get' },
      },
    });
    if (!sar.status?.allowed) return { status: 403, reason: `${user.username} may not get ${path}` };
    return { status: 200 };
  }
}
