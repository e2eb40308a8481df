import { DynamicModule, Global, INestApplication, INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IncomingMessage } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { DataSource } from 'typeorm';
import { ServiceName } from '@ds/contracts';
import { BaseConfig, ConfigError, EnvReader, readBaseConfig } from './config';
import { DatabaseDefinition, migrateDatabase, openDatabase, traceDatabaseQueries } from './database';
import { httpServerOptions } from './http-server';
import { createLogger, Logger, PinoNestLogger } from './logger';
import { Metrics } from './metrics';
import { NatsLink, RpcClient, SharedConnectionNatsServer } from './nats';
import { OpsDocument, OpsServer } from './ops-server';
import { startTracing } from './tracing';
import { WireErrorFilter } from './rpc-handling';

/** Everything a service's modules may inject from the platform. */
export const PLATFORM = {
  logger: Symbol('logger'),
  metrics: Symbol('metrics'),
  rpc: Symbol('rpc'),
  nats: Symbol('nats'),
  config: Symbol('config'),
} as const;

export interface ServiceRuntime<TConfig> {
  base: BaseConfig;
  config: TConfig;
  logger: Logger;
  metrics: Metrics;
  nats: NatsLink;
  rpc: RpcClient;
  dataSource: DataSource;
}

export interface ServiceDefinition<TConfig> {
  name: ServiceName;
  database: DatabaseDefinition;
  readConfig: (env: EnvReader) => TConfig;
  module: (runtime: ServiceRuntime<TConfig>) => DynamicModule;
  /** Present for the HTTP edge: the port to serve and a hook to shape the Fastify instance. */
  http?: {
    port: (config: TConfig) => number;
    configure: (app: NestFastifyApplication, runtime: ServiceRuntime<TConfig>) => Promise<void> | void;
    bodyLimit: number;
    /** The whole request, headers and body, must arrive within this time. */
    requestTimeoutMs: (config: TConfig) => number;
    genReqId: (request: IncomingMessage) => string;
    /**
     * Proxies whose `X-Forwarded-For` is believed (Fastify's `trustProxy` list: addresses, CIDRs,
     * `loopback`, `linklocal`, `uniquelocal`); the client's address is the last one not among them.
     */
    trustedProxies: (config: TConfig) => string[];
  };
  /** Documents served on the ops port by path (for example the gateway's `/routes`). */
  opsDocuments?: (app: INestApplication | INestMicroservice) => ReadonlyMap<string, OpsDocument>;
  /** Extra readiness checks (for example Redis) beside NATS and PostgreSQL. */
  readiness?: (app: INestApplication | INestMicroservice) => Record<string, () => Promise<boolean>>;
  /** Work started after the service answers (for example a JetStream consumer) and stopped before the drain ends. */
  background?: (app: INestApplication | INestMicroservice, runtime: ServiceRuntime<TConfig>) => Promise<{ stop(): Promise<void> }>;
}

export interface RunningService {
  stop(): Promise<void>;
  opsPort: number;
  httpPort: number | null;
}

function platformModule<TConfig>(runtime: ServiceRuntime<TConfig>): DynamicModule {
  @Global()
  @Module({})
  class PlatformModule {}
  return {
    module: PlatformModule,
    imports: [TypeOrmModule.forRootAsync({ useFactory: () => ({}), dataSourceFactory: async () => runtime.dataSource })],
    providers: [
      { provide: PLATFORM.logger, useValue: runtime.logger },
      { provide: PLATFORM.metrics, useValue: runtime.metrics },
      { provide: PLATFORM.rpc, useValue: runtime.rpc },
      { provide: PLATFORM.nats, useValue: runtime.nats },
      { provide: PLATFORM.config, useValue: runtime.config },
    ],
    exports: [PLATFORM.logger, PLATFORM.metrics, PLATFORM.rpc, PLATFORM.nats, PLATFORM.config, TypeOrmModule],
  };
}

let rejectionLoggerInstalled = false;

/**
 * A promise rejected with no handler is a bug to log and fix, not a reason to drop every request in flight:
 * Node's default ends the process.
 */
function logUnhandledRejections(logger: Logger): void {
  if (rejectionLoggerInstalled) return;
  rejectionLoggerInstalled = true;
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'));
}

/** Starts one service: configuration, connections, migrations, the Nest app, probes and graceful shutdown. */
export async function startService<TConfig>(definition: ServiceDefinition<TConfig>, env: EnvReader = new EnvReader()): Promise<RunningService> {
  const base = readBaseConfig(definition.name, env);
  boundHeapGrowth(base.heapGrowingPercent);
  const config = definition.readConfig(env);
  env.done();
  const logger = createLogger(definition.name, base.logLevel);
  logUnhandledRejections(logger);
  const metrics = new Metrics(definition.name);
  const tracing = startTracing(definition.name, base.otlpEndpoint);
  if (tracing) {
    traceDatabaseQueries();
    logger.info('exporting traces over OTLP');
  }

  const dataSource = await openDatabase(base.databaseUrl, definition.database, base.databasePoolSize, base.databaseTimeouts);
  let nats: NatsLink;
  try {
    nats = await NatsLink.open(base.natsUrl, definition.name, logger, base.natsAuth);
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  if (base.runMigrations) await migrateDatabase(base.databaseUrl, definition.database, logger);

  const runtime: ServiceRuntime<TConfig> = { base, config, logger, metrics, nats, rpc: new RpcClient(nats, metrics), dataSource };
  const root = definition.module(runtime);
  const rootModule: DynamicModule = { ...root, imports: [platformModule(runtime), ...(root.imports ?? [])] };
  const nestLogger = new PinoNestLogger(logger);

  let app: INestApplication | INestMicroservice;
  let natsServer: SharedConnectionNatsServer | null = null;
  let closingHttp = false;
  let httpPort: number | null = null;
  if (definition.http) {
    const adapter = new FastifyAdapter({
      ...httpServerOptions({ requestTimeoutMs: definition.http.requestTimeoutMs(config) }),
      bodyLimit: definition.http.bodyLimit,
      trustProxy: definition.http.trustedProxies(config),
      genReqId: definition.http.genReqId,
    });
    // Nest's own body parser is off: the service installs parsers that fit its order of checks.
    const httpApp = await NestFactory.create<NestFastifyApplication>(rootModule, adapter, { logger: nestLogger, abortOnError: false, bodyParser: false });
    await definition.http.configure(httpApp, runtime);
    // Responses finished during shutdown close their connection; otherwise a keep-alive socket that was
    // busy when the close began would hold the server open until the client let go.
    httpApp
      .getHttpAdapter()
      .getInstance()
      .addHook('onSend', async (_request, reply) => {
        if (closingHttp) reply.header('connection', 'close');
      });
    await httpApp.listen(definition.http.port(config), '0.0.0.0');
    const address = httpApp.getHttpServer().address();
    httpPort = typeof address === 'object' && address ? address.port : definition.http.port(config);
    app = httpApp;
  } else {
    natsServer = new SharedConnectionNatsServer(nats, definition.name, metrics);
    const micro = await NestFactory.createMicroservice(rootModule, { strategy: natsServer, logger: nestLogger, abortOnError: false });
    micro.useGlobalFilters(new WireErrorFilter(logger));
    await micro.listen();
    // The subscriptions are only queued by listen(); once the server has answered a flush it holds them, so
    // the service never reports ready while a request to it would still find no responder.
    await nats.connection.flush();
    app = micro;
  }

  const background = definition.background ? await definition.background(app, runtime) : null;
  const ops = new OpsServer(
    metrics,
    {
      nats: async () => nats.connected,
      database: async () => (await dataSource.query('SELECT 1'), true),
      ...(definition.readiness?.(app) ?? {}),
    },
    definition.opsDocuments?.(app),
  );
  const opsPort = await ops.listen(base.opsPort, base.opsHost);
  logger.info({ opsPort, httpPort }, `${definition.name} started`);

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      ops.markShuttingDown();
      const deadline = setTimeout(
        () => {
          logger.error('graceful shutdown took too long; exiting');
          process.exit(1);
        },
        base.shutdownDelayMs + base.shutdownGraceMs + 5_000,
      );
      deadline.unref();
      if (base.shutdownDelayMs > 0) {
        logger.info({ delayMs: base.shutdownDelayMs }, 'shutting down: not ready, still taking work until balancers have seen it');
        await new Promise((resolve) => setTimeout(resolve, base.shutdownDelayMs));
      }
      logger.info('shutting down: draining in-flight work');
      try {
        if (natsServer) await natsServer.drain(base.shutdownGraceMs);
        logger.debug('shutdown: requests drained');
        await background?.stop();
        // Closing the app also closes the TypeORM data source it was given.
        closingHttp = true;
        await app.close();
        logger.debug('shutdown: application closed');
        await nats.close();
        logger.debug('shutdown: NATS connection drained');
        if (dataSource.isInitialized) await dataSource.destroy();
      } catch (error) {
        logger.error({ err: error }, 'shutdown did not finish cleanly');
      } finally {
        await ops.close();
        await tracing?.shutdown();
        clearTimeout(deadline);
      }
      logger.info('stopped');
    })());
  return { stop, opsPort, httpPort };
}

/** The entry point of every service's main.ts: `main.js` runs it, `main.js migrate` only migrates. */
export async function runServiceMain<TConfig>(definition: ServiceDefinition<TConfig>): Promise<void> {
  try {
    if (process.argv[2] === 'migrate') {
      const env = new EnvReader();
      const base = readBaseConfig(definition.name, env);
      env.done();
      const logger = createLogger(definition.name, base.logLevel);
      await migrateDatabase(base.databaseUrl, definition.database, logger);
      return;
    }
    const service = await startService(definition);
    const onSignal = () => void service.stop().then(() => process.exit(0));
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  } catch (error) {
    const message = error instanceof ConfigError ? error.message : `failed to start: ${(error as Error)?.message ?? String(error)}`;
    process.stderr.write(`${definition.name}: ${message}\n`);
    process.exit(1);
  }
}

/**
 * Under load V8 lets the heap grow to up to four times what survived the last full collection before it collects
 * again: on these services, whose live heap is 30 to 40 MB, that put the gateway at 250 MB resident while
 * holding 40 MB of live objects. A smaller factor collects sooner, for a little more collector time
 * (docs/performance.md). The factor is read at every collection, so setting it at start works.
 */
function boundHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
