import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { ServiceError } from '@ds/contracts';
import { Logger, PLATFORM } from '@ds/platform';
import { servedAddressWarning } from '../app-address';
import { GatewayConfig } from '../config';
import { PublicRoute } from '../http/access';

/** Where `npm run build` puts the web application (vite's outDir), beside the compiled services in dist/. */
export const WEB_DIST_DIR = resolve(__dirname, '../../../web');

/**
 * No inline script or style, no third-party origin; the application only talks to its own /app/v1.
 * frame-ancestors is left to the embed launch, which knows the partner's origins.
 */
export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
};

/** The SPA's routes; each serves index.html and the client-side router draws the screen. */
export const APP_ROUTES = [
  '',
  'sign-in',
  'sign-up',
  'workspaces',
  'decisions',
  'decisions/:id',
  'decisions/:id/:view',
  'executions',
  'executions/:id',
  'keys',
  'members',
  'billing',
  'settings',
  'deliveries',
  'deliveries/:id',
  'signing-secret',
  'secrets',
  'invitations/accept',
  'account',
];

interface WebBundle {
  index: Buffer;
  /** Hashed file names under assets/, read once: a name not in this set is never looked up on disk. */
  assets: Map<string, Buffer>;
}

function loadBundle(dir: string): WebBundle | null {
  const indexPath = join(dir, 'index.html');
  if (!existsSync(indexPath)) return null;
  const assetsDir = join(dir, 'assets');
  const assets = new Map<string, Buffer>();
  if (existsSync(assetsDir)) {
    for (const name of readdirSync(assetsDir)) {
      if (CONTENT_TYPES[extname(name)]) assets.set(name, readFileSync(join(assetsDir, name)));
    }
  }
  return { index: readFileSync(indexPath), assets };
}

/** Serves the web application at the gateway's root: hashed assets cached for a year, index.html never. */
@Controller()
export class WebController {
  private readonly bundle = loadBundle(WEB_DIST_DIR);
  /** Said once per process: one line is enough for the operator, and a stream of them would drown the log. */
  private addressWarned = false;

  constructor(
    @Inject(PLATFORM.config) private readonly config: GatewayConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {}

  @Get(APP_ROUTES)
  @PublicRoute()
  page(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Buffer {
    if (!this.bundle) throw new ServiceError('NOT_FOUND', 'The web application is not built; run npm run build.');
    if (!this.addressWarned) {
      const warning = servedAddressWarning(this.config.appUrl, { protocol: request.protocol, host: request.host });
      if (warning) {
        this.addressWarned = true;
        this.logger.warn(warning);
      }
    }
    reply.header('content-type', 'text/html; charset=utf-8');
    reply.header('cache-control', 'no-cache');
    // A page loaded in an embed session already carries that session's frame-ancestors (set at the edge); keep it.
    const framing = reply.getHeader('content-security-policy');
    reply.header('content-security-policy', typeof framing === 'string' && framing.startsWith('frame-ancestors ') ? `${APP_CSP}; ${framing}` : APP_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'same-origin');
    return this.bundle.index;
  }

  @Get('assets/:file')
  @PublicRoute()
  asset(@Param('file') file: string, @Res({ passthrough: true }) reply: FastifyReply): Buffer {
    const body = this.bundle?.assets.get(file);
    if (!body) throw new ServiceError('NOT_FOUND', 'No such file.');
    reply.header('content-type', CONTENT_TYPES[extname(file)]);
    reply.header('cache-control', 'public, max-age=31536000, immutable');
    reply.header('x-content-type-options', 'nosniff');
    return body;
  }
}
