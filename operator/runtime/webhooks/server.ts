/**
 * The HTTPS server the API server calls for admission — one path per hook (see admission.ts),
 * AdmissionReview v1 in and out — and for conversion (`/convert`, ConversionReview v1, see
 * conversion-review.ts). Its certificate can be swapped while it runs (a renewal).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as https from 'node:https';
import type { Logger } from 'pino';
import type { AdmissionContext, ControllerDeclaration, KubeObject } from '../../../constructs/contract';
import { CONVERSION_PATH, convertingKinds } from '../../../constructs/contract/webhook-paths';
import type { KindDescriptor } from '../../../constructs/contract/kind';
import { type AdmissionRequest, admissionRoutes, review } from './admission';
import { type ConversionRequest, convertReview } from './conversion-review';
import type { ServingCertificate } from './certificate';

/** Larger than any object etcd stores (1.5 MiB), twice over for an update's old object. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export class WebhookServer {
  private readonly routes: ReturnType<typeof admissionRoutes>;
  /** The kinds whose versions are converted here. */
  readonly converting: readonly KindDescriptor[];
  private server?: https.Server;

  constructor(
    decls: readonly ControllerDeclaration[],
    /** What a validate hook of `decl` may read about `object`, from the caches. */
    private readonly contextFor: (
      decl: ControllerDeclaration,
      object: KubeObject,
    ) => Omit<AdmissionContext, 'operation' | 'old'>,
    private readonly logger: Logger,
  ) {
    this.routes = admissionRoutes(decls);
    this.converting = convertingKinds(decls);
  }

  /** Whether any declaration has an admission hook to serve. */
  get hasHooks(): boolean {
    return this.routes.size > 0;
  }

  /** Whether there is anything to serve: admission hooks or conversions. */
  get hasWork(): boolean {
    return this.hasHooks || this.converting.length > 0;
  }

  /** Listens on the address; resolves with the port (for `:0`). */
  async listen(host: string | undefined, port: number, certificate: ServingCertificate): Promise<number> {
    const server = https.createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
      void this.handle(req, res);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        resolve();
      });
    });
    const address = server.address();
    const bound = typeof address === 'object' && address ? address.port : port;
    const converting = this.converting.map((k) => k.crdName);
    this.logger.info({ port: bound, hooks: [...this.routes.keys()], converting }, 'serving webhooks');
    return bound;
  }

  /** Serves a renewed certificate from the next connection on. */
  setCertificate(certificate: ServingCertificate): void {
    this.server?.setSecureContext({ cert: certificate.cert, key: certificate.key });
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((r) => {
      server.close(() => {
        r();
      });
    });
  }

  // eslint-disable-next-line complexity -- routes one request (conversion, admission, unknown) and answers its failures, as controller-runtime's webhook server does in one handler
  private async handle(req: IncomingMessage, res: ServerResponse) {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (path === CONVERSION_PATH && req.method === 'POST' && this.converting.length > 0) {
      await this.handleConversion(req, res);
      return;
    }
    const route = this.routes.get(path);
    if (!route || req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    let request: AdmissionRequest | undefined;
    try {
      const body = JSON.parse(await readBody(req)) as { request?: AdmissionRequest };
      request = body.request;
      if (!request?.uid) throw new Error('not an AdmissionReview: no request.uid');
      const response = review(route.hook, route.decl, request, (o) => this.contextFor(route.decl, o));
      if (!response.allowed)
        this.logger.info(
          { hook: route.hook, controller: route.decl.name, name: request.object?.metadata.name },
          `refused: ${response.status?.message ?? ''}`,
        );
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    } catch (err) {
      // A hook that throws is a bug of the hook: answer with an error (the API server then
      // refuses the request, fail-closed) and log it, rather than hang the request.
      this.logger.error({ err, hook: route.hook, controller: route.decl.name }, 'admission hook failed');
      const uid = request?.uid ?? '';
      const message = `admission hook of ${route.decl.name} failed: ${err instanceof Error ? err.message : String(err)}`;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid, allowed: false, status: { code: 500, reason: 'InternalError', message } },
        }),
      );
    }
  }

  private async handleConversion(req: IncomingMessage, res: ServerResponse) {
    const { status, body, failure } = await answerConversion(this.converting, req);
    if (failure !== undefined) this.logger.warn({ status, message: failure }, 'conversion failed');
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  }
}

/**
 * A ConversionReview in, one out: the objects converted, or a failure the API server reports
 * (`failure` says what went wrong, for the log).
 */
async function answerConversion(
  kinds: readonly KindDescriptor[],
  req: IncomingMessage,
): Promise<{ status: number; body: unknown; failure?: string }> {
  let request: ConversionRequest | undefined;
  try {
    request = (JSON.parse(await readBody(req)) as { request?: ConversionRequest }).request;
  } catch (err) {
    const failure = `not JSON: ${err instanceof Error ? err.message : String(err)}`;
    return { status: 400, body: { message: failure }, failure };
  }
  if (!request?.uid || !Array.isArray(request.objects)) {
    const failure = 'not a ConversionReview: no request.uid or request.objects';
    return { status: 400, body: { message: failure }, failure };
  }
  const response = convertReview(kinds, request);
  return {
    status: 200,
    body: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response },
    failure: response.result.status === 'Failure' ? response.result.message : undefined,
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`request body above ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}
