import * as net from 'node:net';

/** A TCP proxy on loopback whose connections a test can cut, or stall, to break watches for real. */
export class TcpProxy {
  private readonly sockets = new Set<net.Socket>();
  /** Each connection's answer direction, which `stall` holds back. */
  private readonly answers = new Map<net.Socket, net.Socket>();
  private paused = false;
  private stalled = false;
  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    // Assigned below, once the server it closes over exists.
    // eslint-disable-next-line prefer-const -- assigned once the server it closes over exists
    let proxy!: TcpProxy;
    const server = net.createServer((client) => {
      if (proxy.paused) {
        client.destroy();
        return;
      }
      const upstream = net.connect(target.port, target.host);
      proxy.sockets.add(client);
      proxy.sockets.add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        proxy.sockets.delete(client);
        proxy.sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.pipe(upstream);
      proxy.answers.set(upstream, client);
      upstream.once('close', () => proxy.answers.delete(upstream));
      if (proxy.stalled) upstream.pause();
      else upstream.pipe(client);
    });
    await new Promise<void>((r) =>
      server.listen(0, '127.0.0.1', () => {
        r();
      }),
    );
    proxy = new TcpProxy(server, (server.address() as net.AddressInfo).port);
    return proxy;
  }

  get connections(): number {
    return this.sockets.size / 2;
  }

  /** Resets every open connection (the client sees its watches and requests fail). */
  cutAll(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  /**
   * Every connection, open or new, stays open but carries no answer back: requests reach the API
   * server, nothing it sends reaches the client (a middlebox that silently stops forwarding).
   */
  stall(): void {
    this.stalled = true;
    for (const [upstream, client] of this.answers) {
      upstream.unpipe(client);
      upstream.pause();
    }
  }

  /** Answers flow again, what was held back first. */
  unstall(): void {
    this.stalled = false;
    for (const [upstream, client] of this.answers) {
      upstream.pipe(client);
      upstream.resume();
    }
  }

  /** While paused, new connections are refused (reset at once). */
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((r) =>
      this.server.close(() => {
        r();
      }),
    );
  }
}
